import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callsIn, startSpine, type Spine } from "../support/spine.js";
import { eventually, waitFor } from "../support/wait.js";

describe("durable state and retries", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine();
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("keeps enabled tools and the conversation across a worker restart", async () => {
    await spine.rooms.ask("durable", "/tools");
    const before = await spine.rooms.ask("durable", "/status");
    const conversation = /Conversation: (\S+)/.exec(before.text)![1];
    await spine.restart();
    const after = await spine.rooms.ask("durable", "/status");
    expect(after.text).toContain(`Conversation: ${conversation}`);
    expect(after.text).toMatch(/Enabled tools: .*feed\.list.*feed\.digest/);
    const listed = await spine.rooms.ask("durable", "/call feed.list");
    expect(listed.outcome.reply?.blocks[0]?.type).toBe("answer");
  });

  it("retries a failed delivery without asking the namespace again, and delivers once", async () => {
    const before = callsIn(spine.callLog).length;
    spine.rooms.failNext = 2;
    const d = await spine.rooms.ask("outage", "what should I read today?");
    expect(d.text).toContain("Today's digest");
    expect(spine.rooms.delivered.filter((x) => x.event.eventId === d.event.eventId)).toHaveLength(1);
    expect(
      callsIn(spine.callLog)
        .slice(before)
        .filter((c) => c.startsWith("feed.ask")),
    ).toHaveLength(1);
  });

  it("restarts a killed namespace child; the next turn works", async () => {
    await spine.rooms.ask("crash", "what should I read today?");
    const client = spine.runtime.namespaces.get("feed");
    const pid = client.pid!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    // A turn during the restart gets the answer or a clear line, never a crash.
    const during = (await spine.rooms.ask("crash", "what should I read today?")).text;
    if (!during.includes("Today's digest")) expect(during).toMatch(/agent/);
    // Once a new child is up, answers are back.
    await waitFor(() => client.pid !== null && client.pid !== pid, undefined, "a new child");
    await client.tools();
    expect((await spine.rooms.ask("crash", "what should I read today?")).text).toContain("Today's digest");
  });

  it("a turn left half-done by a dead worker is picked up from Redis by a new one", async () => {
    // A worker died holding the room: the event is in the inbox, the room is in its
    // lane's running set with a lease that has run out, and nothing else points at it.
    const { redis, schedulerKeys: keys } = spine.redis;
    const room = "telegram:0:orphan";
    const event = {
      kind: "message",
      text: "what should I read today?",
      eventId: "orphan-1",
      room,
      namespace: "feed",
      platform: "telegram",
      sender: { id: "test:alice", allowed: true },
      addressed: "direct",
      receivedAt: Date.now(),
      origin: { platform: "telegram", botId: 0, chatId: 0, chatType: "private", userId: 0 },
    };
    await redis.rpush(keys.inbox(room), JSON.stringify(event));
    await redis.set(keys.lease(room), "dead-worker", "PX", 50);
    await redis.zadd(keys.laneShard("telegram", keys.shardOf(room)).running, Date.now() - 1000, room);
    await spine.restart();
    const d = await spine.rooms.reply("orphan-1");
    expect(d.text).toContain("Today's digest");
    await eventually(async () => expect(await redis.llen(keys.inbox(room))).toBe(0));
  });
});
