import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboundEvent } from "../../src/core/event.js";
import { FloodGate } from "../../src/scheduler/flood-gate.js";
import { RedisInbox } from "../../src/scheduler/redis-inbox.js";
import { testRedis, type TestRedis } from "../support/redis.js";

let db: TestRedis;
let inbox: RedisInbox;
beforeAll(async () => {
  db = await testRedis();
  inbox = new RedisInbox(db.scheduler, 60_000);
});
afterAll(async () => db.cleanup());

let count = 0;
function message(room: string, eventId = `ev:${++count}`): InboundEvent {
  return {
    kind: "message",
    text: "hello",
    eventId,
    room,
    namespace: "feed",
    platform: "telegram",
    sender: { id: "tg:5", allowed: true },
    addressed: "direct",
    receivedAt: Date.now(),
    origin: { platform: "telegram", botId: 1, chatId: 5, chatType: "private", userId: 5 },
  };
}

describe("the flood check inside the enqueue script (one round trip), on real Redis", () => {
  it("queues a person's turns up to the rate, then refuses the excess with one notice", async () => {
    const gate = new FloodGate(db.scheduler, { turnsPerMinute: 3, roomQueueCap: 100 });
    const room = "telegram:1:5";
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await gate.enqueue(inbox, message(room), "tg:5"));
    expect(results.slice(0, 3)).toEqual([
      { admit: true, fresh: true },
      { admit: true, fresh: true },
      { admit: true, fresh: true },
    ]);
    expect(results[3]).toEqual({
      admit: false,
      notice: expect.stringContaining("more than 3 messages a minute"),
    });
    expect(results.slice(4)).toEqual([
      { admit: false, notice: undefined },
      { admit: false, notice: undefined },
    ]);
    // Only the admitted three are waiting; the counter lives on Redis' clock.
    expect(await db.redis.llen(db.schedulerKeys.inbox(room))).toBe(3);
    expect(await db.redis.ttl(db.schedulerKeys.turnRate("telegram:1:5", "tg:5"))).toBeGreaterThan(0);
    // Another person is counted apart.
    expect(await gate.enqueue(inbox, message(room), "tg:6")).toEqual({ admit: true, fresh: true });
  });

  it("refuses when the room's queue is full, whoever sends, and says so once", async () => {
    const gate = new FloodGate(db.scheduler, { turnsPerMinute: 100, roomQueueCap: 2 });
    const room = "telegram:1:77";
    expect(await gate.enqueue(inbox, message(room), "tg:7")).toEqual({ admit: true, fresh: true });
    expect(await gate.enqueue(inbox, message(room), "tg:8")).toEqual({ admit: true, fresh: true });
    expect(await gate.enqueue(inbox, message(room), "tg:7")).toEqual({
      admit: false,
      notice: expect.stringContaining("2 messages waiting"),
    });
    expect(await gate.enqueue(inbox, message(room), "tg:7")).toEqual({ admit: false, notice: undefined });
    expect(await db.redis.llen(db.schedulerKeys.inbox(room))).toBe(2);
    expect(await gate.enqueue(inbox, message("telegram:1:78"), "tg:7")).toEqual({ admit: true, fresh: true });
  });

  it("answers a redelivered event as a duplicate without counting it as a turn", async () => {
    const gate = new FloodGate(db.scheduler, { turnsPerMinute: 1, roomQueueCap: 100 });
    const room = "telegram:1:99";
    const event = message(room);
    expect(await gate.enqueue(inbox, event, "tg:9")).toEqual({ admit: true, fresh: true });
    expect(await gate.enqueue(inbox, event, "tg:9")).toEqual({ admit: true, fresh: false });
    expect(await db.redis.get(db.schedulerKeys.turnRate("telegram:1:99", "tg:9"))).toBe("1");
    expect(await db.redis.llen(db.schedulerKeys.inbox(room))).toBe(1);
    // A refused event is not remembered as seen: once the window allows, it may still be queued.
    const refused = message(room);
    expect(await gate.enqueue(inbox, refused, "tg:9")).toMatchObject({ admit: false });
    expect(
      await db.redis.zscore(
        db.schedulerKeys.seen(db.schedulerKeys.shardOf(room)),
        `${room} ${refused.eventId}`,
      ),
    ).toBeNull();
  });
});
