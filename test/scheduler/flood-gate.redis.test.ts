import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FloodGate } from "../../src/scheduler/flood-gate.js";
import { StrangerGate } from "../../src/edge/stranger-gate.js";
import { testRedis, type TestRedis } from "../support/redis.js";

let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => db.cleanup());

describe("inbound flood control on real Redis", () => {
  it("admits a person's turns up to the rate, then refuses with one notice", async () => {
    const gate = new FloodGate(db.scheduler, { turnsPerMinute: 3, roomQueueCap: 100 });
    const verdicts = [];
    for (let i = 0; i < 6; i++) verdicts.push(await gate.check("telegram:1:5", "tg:5"));
    expect(verdicts.slice(0, 3)).toEqual([{ admit: true }, { admit: true }, { admit: true }]);
    expect(verdicts[3]).toEqual({
      admit: false,
      notice: expect.stringContaining("more than 3 messages a minute"),
    });
    expect(verdicts.slice(4)).toEqual([
      { admit: false, notice: undefined },
      { admit: false, notice: undefined },
    ]);
    // Another person is counted apart.
    expect(await gate.check("telegram:1:5", "tg:6")).toEqual({ admit: true });
    expect(await db.redis.ttl(db.schedulerKeys.turnRate("telegram:1:5", "tg:5"))).toBeGreaterThan(0);
  });

  it("refuses when the room's queue is full, whoever sends", async () => {
    const gate = new FloodGate(db.scheduler, { turnsPerMinute: 100, roomQueueCap: 2 });
    await db.redis.rpush(db.schedulerKeys.inbox("matrix:!full:x"), "a", "b");
    const verdict = await gate.check("matrix:!full:x", "@a:x");
    expect(verdict).toEqual({ admit: false, notice: expect.stringContaining("2 messages waiting") });
    expect(await gate.check("matrix:!other:x", "@a:x")).toEqual({ admit: true });
  });

  it("#6 claims a notice once an hour across processes, and a repeat costs no round trip", async () => {
    const key = db.keys.refused("telegram:1:9", "tg:9");
    const first = new StrangerGate(db.redis);
    const second = new StrangerGate(db.redis);
    expect(await first.claim(key)).toBe(true);
    expect(await second.claim(key)).toBe(false);
    expect(await db.redis.ttl(key)).toBeGreaterThan(3500);
    await db.redis.del(key);
    // Both processes remember the hour: neither asks Redis again, so the key stays gone.
    expect(await first.claim(key)).toBe(false);
    expect(await second.claim(key)).toBe(false);
    expect(await db.redis.exists(key)).toBe(0);
  });

  it("#6 logs a stranger once an hour per sender", () => {
    const gate = new StrangerGate(db.redis);
    expect(gate.logOnce("tg:9")).toBe(true);
    expect(gate.logOnce("tg:9")).toBe(false);
    expect(gate.logOnce("tg:10")).toBe(true);
  });
});
