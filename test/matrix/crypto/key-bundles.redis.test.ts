import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MatrixE2ee } from "../../../src/matrix/crypto/matrix-e2ee.js";
import { MatrixReceiver } from "../../../src/matrix/matrix-receiver.js";
import { E2eePeer } from "../../support/matrix-e2ee-peer.js";
import { matrixConfig, RecordingInbox } from "../../support/matrix-fixtures.js";
import { shareHistory } from "../../support/matrix-history-sharing.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../../support/matrix-homeserver-standin.js";
import { testRedis, type TestRedis } from "../../support/redis.js";
import { capturingLogger } from "../../support/telegram-fixtures.js";

const STORE_KEY = "a store key for the tests, long enough";

/**
 * MSC4268 on the stand-in: a person whose client shares history sends the bot a bundle
 * of the room's keys with the invite; the bot, joining on that invite, takes it only
 * from the inviter and only from a device the inviter cross-signed, and then reads what
 * was written before it was there.
 */
describe("room-key bundles (MSC4268): the history the inviter shares with the bot", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let alice: string;
  let mallory: string;
  let room: string;
  let second: string;
  let alicePassword: string;
  const running: MatrixReceiver[] = [];

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot", "BOTDEV");
    ({ userId: alice, password: alicePassword } = hs.registerUser("alice"));
    mallory = hs.registerUser("mallory").userId;
    // The bot is not in the room yet: alice and mallory talk first.
    room = hs.createRoom(alice, { members: [mallory], encrypted: true });
    second = hs.createRoom(alice, { encrypted: true });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await hs.close();
    await redis.cleanup();
  });

  /** Starts the bot (not in the room) and returns how to decrypt as its device, and its log. */
  async function start() {
    const { log, lines } = capturingLogger();
    const config = {
      ...matrixConfig(
        hs.url,
        bot.accessToken,
        [
          { room, users: [alice] },
          { room: second, users: [alice] },
        ],
        [alice, mallory],
      ),
      storeKey: STORE_KEY,
    };
    const e2ee = new MatrixE2ee(config, log, redis.redis, redis.keys);
    const receiver = new MatrixReceiver({
      config,
      maxFileBytes: 1000,
      redis: redis.redis,
      keys: redis.keys,
      inbox: new RecordingInbox(),
      log,
      syncTimeoutMs: 200,
      e2ee,
    });
    running.push(receiver);
    await receiver.start();
    /** What the bot's own device reads of an event (its text), or why not. */
    const read = async (event: StandinEvent, inRoom = room): Promise<string> => {
      const device = (await e2ee.ready()).owner?.device;
      if (!device) throw new Error("the bot does not own its device");
      const { pos: _pos, ...wire } = event;
      return device.decrypt(inRoom, wire).then(
        (clear) => String(clear.content.body),
        (err: unknown) => `refused: ${(err as { code?: string }).code ?? String(err)}`,
      );
    };
    const said = (msg: string) => lines().filter((l) => l.msg === msg);
    /** What the bot warned about bundles (pino level 40 and up). */
    const warnings = () =>
      lines()
        .filter((l) => Number(l.level) >= 40 && String(l.msg).includes("bundle"))
        .map((l) => l.msg);
    return { read, said, warnings };
  }

  async function invite(inviter: string) {
    hs.invite(room, inviter, bot.userId);
    await expect.poll(() => hs.membership(room, bot.userId), { timeout: 10_000 }).toBe("join");
  }

  it("takes the inviter's bundle and reads what she and others wrote before the bot was there", async () => {
    const roomgate = await start();
    const alicePhone = await E2eePeer.login(hs, alice, "ALICEPHONE", { strict: true });
    const malloryPhone = await E2eePeer.login(hs, mallory, "MALLORY1");
    const before = await alicePhone.sendText(room, "the question asked before the invite");
    const fromMallory = await malloryPhone.sendText(room, "mallory, before the invite too");
    expect(await roomgate.read(before)).toBe("refused: missing-key");

    await alicePhone.sync(); // alice's client holds mallory's room key, as Element would
    expect(await shareHistory(hs, alicePhone, room, botUser())).toBeDefined();
    await invite(alice);
    await expect.poll(() => roomgate.said("matrix: took the inviter's room-key bundle").length).toBe(1);
    expect(await roomgate.read(before)).toBe("the question asked before the invite");
    expect(await roomgate.read(fromMallory)).toBe("mallory, before the invite too");
    expect(roomgate.warnings()).toEqual([]);
  });

  it("takes a bundle that arrives after the join, while the room waits for it", async () => {
    const roomgate = await start();
    const alicePhone = await E2eePeer.login(hs, alice, "ALICEPHONE");
    const before = await alicePhone.sendText(room, "asked before the invite");
    await invite(alice);
    await shareHistory(hs, alicePhone, room, botUser());
    await expect
      .poll(() => roomgate.said("matrix: took the inviter's room-key bundle").length, { timeout: 10_000 })
      .toBe(1);
    expect(await roomgate.read(before)).toBe("asked before the invite");
    expect(roomgate.warnings()).toEqual([]);
  });

  it("takes no bundle from anyone but the inviter", async () => {
    const roomgate = await start();
    const alicePhone = await E2eePeer.login(hs, alice, "ALICEPHONE");
    const malloryPhone = await E2eePeer.login(hs, mallory, "MALLORY1");
    const before = await alicePhone.sendText(room, "alice, before the invite");
    await malloryPhone.sync();
    // mallory (a cross-signed member of the room) sends her bundle; alice invites, sharing none.
    expect(await shareHistory(hs, malloryPhone, room, botUser())).toBeDefined();
    await invite(alice);
    await expect
      .poll(() => roomgate.said("matrix: no room-key bundle from the inviter yet").length)
      .toBeGreaterThan(0);
    expect(await roomgate.read(before)).toBe("refused: missing-key");
    expect(roomgate.said("matrix: took the inviter's room-key bundle")).toHaveLength(0);
  });

  it("takes no bundle from an inviter whose pinned identity changed", async () => {
    const roomgate = await start();
    const alicePhone = await E2eePeer.login(hs, alice, "ALICEPHONE");
    await alicePhone.sendText(room, "before the first invite");
    await shareHistory(hs, alicePhone, room, botUser());
    await invite(alice);
    // Taking her first bundle pinned alice's identity.
    await expect.poll(() => roomgate.said("matrix: took the inviter's room-key bundle").length).toBe(1);
    // Someone replaces alice's cross-signing identity (with her password) and invites the bot elsewhere.
    await alicePhone.bootstrapCrossSigning(alicePassword);
    const before = await alicePhone.sendText(second, "before the second invite");
    await shareHistory(hs, alicePhone, second, botUser());
    hs.invite(second, alice, botUser());
    await expect
      .poll(
        () =>
          roomgate.said(
            "matrix: the inviter's identity changed since it was pinned; their room-key bundle is not taken",
          ).length,
        { timeout: 10_000 },
      )
      .toBe(1);
    expect(await roomgate.read(before, second)).toBe("refused: missing-key");
    expect(roomgate.said("matrix: took the inviter's room-key bundle")).toHaveLength(1);
  });

  const botUser = () => bot.userId;
});
