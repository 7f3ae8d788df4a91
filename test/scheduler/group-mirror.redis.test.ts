import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SendWindow } from "../../src/core/adapter.js";
import { NO_WAIT } from "../../src/scheduler/durable-write.js";
import { FALLBACK_SLOT } from "../../src/scheduler/fallback-scripts.js";
import { fallbackShard, GroupMirror } from "../../src/scheduler/group-mirror.js";
import { MoreKeys, runScript } from "../../src/scheduler/lua-script.js";
import { behindProxy } from "../support/held-proxy.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

/**
 * The copy of a group's sends through the bot's windows, in its room's shard, against a
 * real Redis: what each send writes there, from when the copy is whole (`mirrored`), and
 * how the fallback's slot script (fallback-slot.lua) reads it for a send to the group
 * while the bot's windows are down.
 */
describe("a group's sends copied for the fallback", () => {
  let db: TestRedis;
  let mirror: GroupMirror;
  let bots = 7000;
  beforeAll(async () => {
    db = await testRedis();
    mirror = new GroupMirror(db.redis, db.schedulerKeys, NO_WAIT);
  });
  afterAll(() => db.cleanup());

  const GROUP_MAX = 3;
  const GROUP_MS = 60_150;
  const windowsOf = (bot: number, chat: number): SendWindow[] => {
    const group = `tg:${bot}`;
    return [
      { group, scope: "bot", max: 30, windowMs: 1010 },
      { group, scope: `chat:${chat}`, max: 1, windowMs: 1150 },
      { group, scope: `group:${chat}`, max: GROUP_MAX, windowMs: GROUP_MS },
    ];
  };
  const redisNow = async () => {
    const [seconds, micros] = await db.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  const mirrored = async (bot: number, shard: number) =>
    Number(await db.redis.get(db.schedulerKeys.fallback(shard, `tg:${bot}`, "mirrored")));
  const copy = async (windows: SendWindow[]) => {
    const shard = fallbackShard(db.schedulerKeys, windows, "");
    const key = db.schedulerKeys.fallback(shard, windows[0]!.group, windows[2]!.scope);
    return Object.fromEntries(
      (await db.redis.zrange(key, 0, -1, "WITHSCORES")).flatMap((v, i, all) =>
        i % 2 === 0 ? [[v, Number(all[i + 1])]] : [],
      ),
    ) as Record<string, number>;
  };
  /** One call of the fallback's slot script for a send to the group ("take", soon 20 ms). */
  const fallbackTake = async (windows: SendWindow[], member: string, probingForMs: number) => {
    const keys = db.schedulerKeys;
    const shard = fallbackShard(keys, windows, member);
    const group = windows[0]!.group;
    const named = {
      back: keys.fallback(shard, group, "back"),
      last: keys.fallback(shard, group, "last"),
      groups: keys.fallback(shard, group, "groups"),
      sent: keys.fallback(shard, group, "sent"),
      mirrored: keys.fallback(shard, group, "mirrored"),
    };
    const more = new MoreKeys(FALLBACK_SLOT, named);
    return runScript(
      db.redis,
      FALLBACK_SLOT,
      named,
      {
        windows: windows.map((w) => ({
          windowKey: more.of(keys.fallback(shard, w.group, w.scope)),
          max: w.scope === "bot" ? Math.floor(w.max / keys.shards) : w.max,
          windowMs: w.windowMs,
        })),
        member,
        mode: "take",
        ms: 20,
        failingForMs: 5000,
        group: windows[2]!.scope,
        groupMs: GROUP_MS,
        enterMs: GROUP_MS + 3000,
        probingForMs,
      },
      { moreKeys: more },
    );
  };

  it("is whole from the start for a bot whose windows have no state, from now for one whose have", async () => {
    const fresh = (bots += 1);
    const busy = (bots += 1);
    await db.redis.hset(db.schedulerKeys.rate(`tg:${busy}`, "state"), "at", 1);
    const before = await redisNow();
    await mirror.start(windowsOf(fresh, -1)[0]!);
    await mirror.start(windowsOf(busy, -1)[0]!);
    for (let shard = 0; shard < db.schedulerKeys.shards; shard += 1) {
      expect(await mirrored(fresh, shard)).toBeLessThanOrEqual(before - 86_000_000);
      expect(await mirrored(busy, shard)).toBeGreaterThanOrEqual(before);
    }
    // Set once: a later process's start does not move it.
    const first = await mirrored(busy, 0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await new GroupMirror(db.redis, db.schedulerKeys, NO_WAIT).start(windowsOf(busy, -1)[0]!);
    expect(await mirrored(busy, 0)).toBe(first);
  });

  it("takes the bot's mark from the first process that decided it, not from whether another has sent since", async () => {
    const bot = (bots += 1);
    const before = await redisNow();
    await mirror.start(windowsOf(bot, -1)[0]!);
    // A second process starting as the first books its first send: that first process's
    // copy of the mark has not reached shard 0 yet, and the windows have state now.
    await db.redis.del(db.schedulerKeys.fallback(0, `tg:${bot}`, "mirrored"));
    await db.redis.hset(db.schedulerKeys.rate(`tg:${bot}`, "state"), "at", before);
    await new GroupMirror(db.redis, db.schedulerKeys, NO_WAIT).start(windowsOf(bot, -1)[0]!);
    expect(await mirrored(bot, 0)).toBeLessThanOrEqual(before - 86_000_000);
  });

  it("writes a group's send at its slot, moves it to its answer, and keeps a 429's hold; nothing for a private chat", async () => {
    const bot = (bots += 1);
    const windows = windowsOf(bot, -100);
    const before = await redisNow();
    await mirror.record(windows, "m1", "sent", 40);
    let entries = await copy(windows);
    expect(entries.m1).toBeGreaterThanOrEqual(before + 40);
    // Only a process's start sets the shard's mark: a copy landing first must not make it "now".
    const shard = fallbackShard(db.schedulerKeys, windows, "m1");
    expect(await db.redis.exists(db.schedulerKeys.fallback(shard, `tg:${bot}`, "mirrored"))).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await mirror.record(windows, "m1", "answered", 0);
    entries = await copy(windows);
    expect(entries.m1).toBeGreaterThanOrEqual(before + 60);
    await mirror.record(windows, "hold", "hold", 5000);
    expect((await copy(windows)).hold).toBeGreaterThanOrEqual(before + 5000);
    // A send without a slot answered longer ago than the window no longer counts: not written.
    await mirror.record(windows, "old", "past", GROUP_MS + 1);
    await mirror.record(windows, "recent", "past", 1000);
    entries = await copy(windows);
    expect(entries.old).toBeUndefined();
    expect(entries.recent).toBeLessThanOrEqual((await redisNow()) - 1000);

    const privateChat = windowsOf(bot, 100).slice(0, 2);
    await mirror.record(privateChat, "p1", "sent", 0);
    const privateShard = fallbackShard(db.schedulerKeys, privateChat, "p1");
    expect(await db.redis.exists(db.schedulerKeys.fallback(privateShard, `tg:${bot}`, "group:100"))).toBe(0);
  });

  it("writes a copy its shard refused once the shard is back, as a send at that moment", async () => {
    const bot = (bots += 1);
    const windows = windowsOf(bot, -150);
    const { proxy, url } = await behindProxy(db.url);
    const client = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 20,
    });
    try {
      const away = new GroupMirror(client, db.schedulerKeys, NO_WAIT);
      await new Promise((resolve) => client.once("ready", resolve));
      proxy.hold();
      proxy.cut();
      // The send is not held up by its copy.
      await away.record(windows, "m1", "sent", 0);
      expect(await copy(windows)).toEqual({});
      const backAt = await redisNow();
      proxy.release();
      await waitFor(async () => (await copy(windows)).m1 !== undefined, 5000, "the owed copy");
      expect((await copy(windows)).m1).toBeGreaterThanOrEqual(backAt);
    } finally {
      client.disconnect();
      proxy.close();
    }
  });

  it("holds a process's sends a second at most in all for a mark it cannot set, not a second each", async () => {
    const bot = (bots += 1);
    const { proxy, url } = await behindProxy(db.url);
    const client = new Redis(url, { maxRetriesPerRequest: null });
    try {
      const away = new GroupMirror(client, db.schedulerKeys, NO_WAIT);
      await new Promise((resolve) => client.once("ready", resolve));
      // The bot's windows hang (their master stopped answering): the mark is never set.
      proxy.stall();
      const startedAt = Date.now();
      for (let send = 0; send < 4; send++) await away.start(windowsOf(bot, -1)[0]!);
      // Each send waited for its own second before: the fallback's sends, asked again
      // every few hundred ms, then lost every slot to the chats of a process that had its mark.
      expect(Date.now() - startedAt).toBeLessThan(2500);
      expect(await mirrored(bot, 0)).toBe(0);
    } finally {
      client.disconnect();
      proxy.close();
    }
  });

  it("lets a group into the fallback at once when its copy is whole, within its minute as copied", async () => {
    const bot = (bots += 1);
    await mirror.start(windowsOf(bot, -1)[0]!);
    const quiet = windowsOf(bot, -200);
    const full = windowsOf(bot, -300);
    await mirror.record(quiet, "q1", "sent", 0);
    for (const member of ["f1", "f2", "f3"]) await mirror.record(full, member, "sent", 0);

    const quietReply = await fallbackTake(quiet, "q2", 0);
    expect(quietReply).toMatchObject({ waitMs: 0, refused: false });
    expect(Object.keys(await copy(quiet)).sort()).toEqual(["q1", "q2"]);

    const fullReply = await fallbackTake(full, "f4", 0);
    // Full: the fourth waits for the first of the three to leave the window, a minute on.
    expect(fullReply.waitMs).toBeGreaterThan(GROUP_MS - 5000);
    expect((await copy(full)).f4).toBeUndefined();
  });

  it("holds a group out of the fallback until its minute is surely past when its copy is not whole", async () => {
    const bot = (bots += 1);
    await db.redis.hset(db.schedulerKeys.rate(`tg:${bot}`, "state"), "at", 1);
    await mirror.start(windowsOf(bot, -1)[0]!);
    const windows = windowsOf(bot, -400);
    const early = await fallbackTake(windows, "g1", 10_000);
    expect(early.waitMs).toBe(GROUP_MS + 3000 - 10_000);
    expect((await copy(windows)).g1).toBeUndefined();
    // Probed long enough: every send the bot's windows let through has left the group's minute.
    const late = await fallbackTake(windows, "g1", GROUP_MS + 3000);
    expect(late.waitMs).toBe(0);
    expect((await copy(windows)).g1).toBeDefined();
  });
});
