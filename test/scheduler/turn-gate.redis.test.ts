import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SendDeferredError } from "../../src/core/delivery-errors.js";
import { silentLogger } from "../../src/core/log.js";
import { RoomLease } from "../../src/scheduler/room-lease.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import { TurnGate } from "../../src/scheduler/turn-gate.js";
import { TurnLifecycle } from "../../src/scheduler/turn-lifecycle.js";
import type { Durability } from "../../src/scheduler/durable-write.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { slowRedis, type SlowRedis } from "../support/slow-redis.js";
import { waitFor } from "../support/wait.js";

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

/**
 * A write that answers only once `until` settles (a master whose replica is catching up);
 * `stalled` says when it started waiting.
 */
function stalledWrite(until: Promise<void>): Durability & { stalled: () => boolean } {
  let stalled = false;
  return {
    timeoutMs: 0,
    required: async () => {
      if (!stalled) {
        stalled = true;
        await until;
      }
      return { node: "master", replicas: 0 };
    },
    observe: () => undefined,
    stalled: () => stalled,
  };
}

it("asks again for a slot that went by while its step was held up, so the chat still gets a second between sends", async () => {
  const room = "telegram:7:901";
  const eventId = JSON.stringify({ eventId: "a" });
  await db.scheduler.intake.enqueue({ room, lane: LANE, eventId: "a", entry: eventId, dedupeMs: 60_000 });
  expect((await db.scheduler.claim({ room, lane: LANE, token: "t1", ...SETTINGS })).kind).toBe("claimed");
  let unstall!: () => void;
  const writes = stalledWrite(new Promise<void>((resolve) => (unstall = resolve)));
  const lease = new RoomLease(new SchedulerScripts(db.redis, db.keys, writes), room, LANE, "t1", SETTINGS);
  const limiter = new RedisRateLimiter(db.redis, db.schedulerKeys);
  const gate = new TurnGate(
    { limiter, log: silentLogger(), platform: "telegram" },
    lease,
    {},
    new TurnLifecycle(),
  );
  const chat = [{ group: "gate-test", scope: "chat:901", max: 1, windowMs: 1000 }];

  const held = gate.reserve(chat, "p1").then(() => Date.now());
  await waitFor(() => writes.stalled(), undefined, "the step held up");
  // Another sender of the chat gets the next slot, a second after the held turn's.
  const other = await limiter.acquire(chat);
  const otherAt = Date.now();
  await limiter.answered(chat, other.member);
  // Only now does the held step return: its slot has gone by.
  unstall();
  const heldAt = await held;
  expect(heldAt - otherAt).toBeGreaterThanOrEqual(990);
}, 15_000);

/**
 * Runs `test` with a claimed room and a gate whose Redis is `delayMs` away (a SlowRedis
 * proxy), closing the proxy and its client after.
 */
/**
 * Counts the client's round trips from now on: a command sent while none of its others
 * is awaiting an answer starts one; commands sent beside it share it.
 */
function countRoundTrips(redis: Redis): () => number {
  let inFlight = 0;
  let rounds = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    if (inFlight === 0) rounds += 1;
    inFlight += 1;
    command.promise.finally(() => (inFlight -= 1)).catch(() => undefined);
    return send(command, stream);
  };
  return () => rounds;
}

async function behindProxy(
  delayMs: number,
  room: string,
  test: (t: { gate: TurnGate; limiter: RedisRateLimiter; proxy: SlowRedis; redis: Redis }) => Promise<void>,
): Promise<void> {
  const proxy = await slowRedis(db.url, delayMs);
  const redis = new Redis(proxy.url, { maxRetriesPerRequest: null });
  try {
    const entry = JSON.stringify({ eventId: room });
    await db.scheduler.intake.enqueue({ room, lane: LANE, eventId: room, entry, dedupeMs: 60_000 });
    expect((await db.scheduler.claim({ room, lane: LANE, token: "t1", ...SETTINGS })).kind).toBe("claimed");
    const lease = new RoomLease(new SchedulerScripts(redis, db.keys), room, LANE, "t1", SETTINGS);
    const limiter = new RedisRateLimiter(redis, db.schedulerKeys);
    const gate = new TurnGate(
      { limiter, log: silentLogger(), platform: "telegram" },
      lease,
      {},
      new TurnLifecycle(),
    );
    await test({ gate, limiter, proxy, redis });
  } finally {
    redis.disconnect();
    proxy.close();
  }
}

it("with the limits far off, steps while it books: one round trip before a send instead of two", async () => {
  await behindProxy(5, "telegram:7:902", async ({ gate, redis }) => {
    const wide = [{ group: "gate-test", scope: "bot:wide", max: 1_000_000, windowMs: 1000 }];
    await gate.reserve(wide, "warm");
    const rounds = countRoundTrips(redis);
    await gate.reserve(wide, "p1");
    expect(rounds()).toBe(1);
    const turn = await db.redis.hgetall(db.schedulerKeys.turn("telegram:7:902"));
    expect(Object.keys(turn)).toContain("sending:p1");
  });
}, 15_000);

it("after a chat's one slot a second is taken, books before stepping: a full window parks with nothing marked", async () => {
  await behindProxy(5, "telegram:7:903", async ({ gate }) => {
    const chat = [{ group: "gate-test", scope: "chat:903", max: 1, windowMs: 1000 }];
    await gate.reserve(chat, "p1");
    await expect(gate.reserve(chat, "p2")).rejects.toBeInstanceOf(SendDeferredError);
    const turn = await db.redis.hgetall(db.schedulerKeys.turn("telegram:7:903"));
    expect(Object.keys(turn)).toContain("sending:p1");
    expect(Object.keys(turn)).not.toContain("sending:p2");
    expect(gate.bookedSlot()?.part).toBe("p2");
  });
}, 15_000);

it("asks again for a slot whose answer was held up past it (a WAIT after a failover), so the chat still gets a second between sends", async () => {
  await behindProxy(0, "telegram:7:904", async ({ gate, limiter, proxy }) => {
    const chat = [{ group: "gate-test", scope: "chat:904", max: 1, windowMs: 1000 }];
    // Warm: the usual round trip of this limiter's slot calls, and a slot that has gone by since.
    await limiter.acquire([{ group: "gate-test", scope: "warm:904", max: 1, windowMs: 1000 }]);
    let letGo!: () => void;
    proxy.holdReplies(0, new Promise<void>((resolve) => (letGo = resolve)));
    const held = gate.reserve(chat, "p1").then(() => Date.now());
    await waitFor(() => proxy.heldReplies() > 0, undefined, "the slot's answer held up");
    proxy.holdReplies(0);
    // Another sender of the chat gets the next slot, a second after the held turn's
    // (taken at once, its answer still held up).
    const direct = new RedisRateLimiter(db.redis, db.schedulerKeys);
    const other = await direct.acquire(chat);
    const otherAt = Date.now();
    await direct.answered(chat, other.member);
    letGo();
    const heldAt = await held;
    expect(heldAt - otherAt).toBeGreaterThanOrEqual(990);
  });
}, 15_000);

/** A limiter whose next booking is recorded in Redis but whose answer never comes back (a connection reset). */
class ReplyLost extends RedisRateLimiter {
  private lose = false;
  loseNextReply(): void {
    this.lose = true;
  }
  override async book(...args: Parameters<RedisRateLimiter["book"]>): ReturnType<RedisRateLimiter["book"]> {
    const reply = await super.book(...args);
    if (!this.lose) return reply;
    this.lose = false;
    throw new Error("connection reset; the booking's reply was lost");
  }
}

it("keeps a booking whose answer was lost for the turn's next attempt, so a full group is not held a window longer", async () => {
  const room = "telegram:7:-905";
  const entry = JSON.stringify({ eventId: "b" });
  await db.scheduler.intake.enqueue({ room, lane: LANE, eventId: "b", entry, dedupeMs: 60_000 });
  const WINDOW_MS = 3000;
  const windows = [
    { group: "gate-test", scope: "bot:905", max: 30, windowMs: 1010 },
    { group: "gate-test", scope: "group:-905", max: 2, windowMs: WINDOW_MS },
  ];
  const groupKey = db.schedulerKeys.rate("gate-test", "group:-905");
  const limiter = new ReplyLost(db.redis, db.schedulerKeys);
  const scripts = new SchedulerScripts(db.redis, db.keys);
  /** Claims the room as `token` and opens a gate on what its turn record holds. */
  const attempt = async (token: string) => {
    const claimed = await db.scheduler.claim({ room, lane: LANE, token, ...SETTINGS });
    if (claimed.kind !== "claimed") throw new Error(`room not claimed: ${claimed.kind}`);
    const lease = new RoomLease(scripts, room, LANE, token, SETTINGS);
    const gate = new TurnGate(
      { limiter, log: silentLogger(), platform: "telegram" },
      lease,
      claimed.record,
      new TurnLifecycle(),
    );
    return { lease, gate };
  };
  /** Parks the turn as the runner does, due again at once (the test waits for the slot itself). */
  const park = ({ lease, gate }: Awaited<ReturnType<typeof attempt>>, verdict: "wait" | "retry") =>
    lease.park({
      writes: gate.writes(),
      booked: gate.bookedSlot(),
      head: entry,
      delayMs: 0,
      verdict,
      reason: "test",
      deadlineMs: 600_000,
      letterId: randomUUID(),
    });

  // The group's window is full: its next send is booked a window later.
  for (let i = 0; i < 2; i += 1) await limiter.acquire(windows);
  // The first attempt's booking is made, but its answer is lost: the turn parks for a retry.
  const first = await attempt("t1");
  limiter.loseNextReply();
  await expect(first.gate.reserve(windows, "p1")).rejects.toThrow("reply was lost");
  await park(first, "retry");
  // The next attempt finds the booking standing and parks until it comes.
  const second = await attempt("t2");
  await expect(second.gate.reserve(windows, "p1")).rejects.toBeInstanceOf(SendDeferredError);
  const booked = second.gate.bookedSlot()!;
  const bookedAt = Number(await db.redis.zscore(groupKey, booked.member));
  await park(second, "wait");
  await waitFor(async () => (await redisNow()) >= bookedAt - 10, undefined, "the booked slot");
  const third = await attempt("t3");
  await third.gate.reserve(windows, "p1");
  expect(Number(await db.redis.zscore(groupKey, booked.member)) - bookedAt).toBeLessThan(100);
  // The turn's send is the group's only one in its window now: the next goes at once.
  const next = await limiter.book(windows, randomUUID(), 20);
  expect(next.waitMs, "the group's next send waits for a slot the lost answer's booking still holds").toBe(0);
}, 15_000);

/** Redis' clock in ms, the one slots are planned on. */
async function redisNow(): Promise<number> {
  const [seconds, micros] = await db.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
