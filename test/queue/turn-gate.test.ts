import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { sleep } from "../../src/core/retry.js";
import { RoomLease } from "../../src/queue/room-lease.js";
import { SchedulerScripts } from "../../src/queue/scheduler-scripts.js";
import { TurnGate } from "../../src/queue/turn-gate.js";
import type { Durability } from "../../src/sessions/durable-write.js";
import { RedisRateLimiter } from "../../src/sessions/rate-limiter.js";
import { testRedis, type TestRedis } from "../support/redis.js";

/**
 * A turn's send slot is taken before its fenced step. When the step is held up for
 * longer than the slot lasts (its master failing over: the write waits for a replica
 * that is not there yet), the slot has gone by and other senders planned around it:
 * the gate must ask again, not let the request out among theirs.
 */
let db: TestRedis;
const LANE = "telegram";
const SETTINGS = { leaseMs: 10_000, turnRecordMs: 60_000 };

beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => db.cleanup());

/** Writes that answer only after `ms` (a master whose replica is catching up), as many as `stalls`. */
function stalledWrites(ms: number, stalls: number): Durability {
  let left = stalls;
  return {
    timeoutMs: 0,
    required: async () => {
      if (left-- > 0) await sleep(ms);
      return { node: "master", replicas: 0 };
    },
    observe: () => undefined,
  };
}

it("asks again for a slot that went by while its step was held up, so the chat still gets a second between sends", async () => {
  const room = "telegram:7:901";
  const eventId = JSON.stringify({ eventId: "a" });
  await db.scheduler.enqueue({ room, lane: LANE, eventId: "a", entry: eventId, dedupeMs: 60_000 });
  expect((await db.scheduler.claim({ room, lane: LANE, token: "t1", ...SETTINGS })).kind).toBe("claimed");
  const lease = new RoomLease(
    new SchedulerScripts(db.redis, db.keys, stalledWrites(1500, 1)),
    room,
    LANE,
    "t1",
    SETTINGS,
  );
  const limiter = new RedisRateLimiter(db.redis);
  const gate = new TurnGate({ limiter, log: silentLogger(), platform: "telegram" }, lease, {});
  const chat = [{ key: db.keys.rate("gate-test", "chat:901"), max: 1, windowMs: 1000 }];

  const held = gate.reserve(chat, "p1").then(() => Date.now());
  // The held turn's slot (now) is a second old by then: another sender of the chat may go.
  await sleep(1100);
  const other = await limiter.acquire(chat);
  const otherAt = Date.now();
  await limiter.answered(chat, other.member);
  const heldAt = await held;
  expect(heldAt - otherAt).toBeGreaterThanOrEqual(990);
}, 15_000);
