import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RoomLease } from "../../src/scheduler/room-lease.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import type { Durability } from "../../src/scheduler/durable-write.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

/**
 * A fenced write whose first attempt was applied but not acknowledged (what a master
 * does when it loses its replica mid-failover: the script ran, WAIT counted too few)
 * is sent again by the lease. This is that failover, made deterministic: the first
 * write waits for a replica this single Redis does not have, the next ones do not.
 */
let db: TestRedis;
let n = 0;
let room: string;
const LANE = "telegram";
const SETTINGS = { leaseMs: 5000, turnRecordMs: 60_000 };
const event = (id: string) => JSON.stringify({ eventId: id });

/** Waits for one replica (there is none: ReplicaWaitError) the first `failing` writes, then for none. */
function flakyReplicas(failing: number): Durability {
  let left = failing;
  return {
    timeoutMs: 10,
    required: async () => ({ node: "master", replicas: left-- > 0 ? 1 : 0 }),
    observe: () => undefined,
  };
}

beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => db.cleanup());
beforeEach(() => {
  n += 1;
  room = `telegram:7:${n}`;
});

async function held(scripts: SchedulerScripts, ids: string[]): Promise<RoomLease> {
  for (const id of ids)
    await db.scheduler.intake.enqueue({ room, lane: LANE, eventId: id, entry: event(id), dedupeMs: 60_000 });
  const claimed = await db.scheduler.claim({ room, lane: LANE, token: "t1", ...SETTINGS });
  expect(claimed.kind).toBe("claimed");
  return new RoomLease(scripts, room, LANE, "t1", SETTINGS);
}

describe("a fenced write sent again after an unacknowledged attempt", () => {
  it("a park that already let go of the room wakes a worker for it instead of leaving it to the next look", async () => {
    const scripts = new SchedulerScripts(db.redis, db.keys, flakyReplicas(1));
    const lease = await held(scripts, ["a"]);
    await db.redis.del(db.schedulerKeys.wake(LANE));
    const reply = await lease.park({
      writes: {},
      head: event("a"),
      delayMs: 0,
      verdict: "wait",
      reason: "send window full",
      deadlineMs: 60_000,
      letterId: "x",
    });
    // The retry finds the room let go by the first attempt; the room still waits for its turn.
    expect(reply.kind).toBe("lost");
    expect(lease.active).toBe(false);
    expect(
      await db.redis.zscore(db.schedulerKeys.laneShard(LANE, db.schedulerKeys.shardOf(room)).pending, room),
    ).not.toBeNull();
    expect(await db.redis.lrange(db.schedulerKeys.wake(LANE), 0, -1)).toEqual([room]);
  });

  it("a finish that already ended the turn ends it once: the history gets the turn once, the next turn is kept", async () => {
    const scripts = new SchedulerScripts(db.redis, db.keys, flakyReplicas(1));
    const lease = await held(scripts, ["a", "b"]);
    const commit = {
      session: JSON.stringify({ turns: 1 }),
      idleSeconds: 60,
      append: [JSON.stringify({ role: "user", text: "a" }), JSON.stringify({ role: "bot", text: "echo: a" })],
      historyCap: 10,
      reset: false,
      outcome: "{}",
      eventId: "a",
    };
    const reply = await lease.finish({
      commit,
      head: event("a"),
      idleSeconds: 60,
      draining: false,
      wantHistory: false,
      historyCap: 10,
    });
    // The first attempt applied: the retry reads the next turn's record as it is.
    expect(reply).toMatchObject({ kind: "next", head: event("b"), again: true, record: { computing: "1" } });
    expect(await db.redis.llen(db.schedulerKeys.history(room))).toBe(2);
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("b")]);
    expect(lease.active).toBe(true);
  });

  it("a park of a turn whose finish was applied (its answer lost) leaves the next turn's record alone", async () => {
    // Found by the Sentinel master-kill fault run: the finish of "a" ran on the new master,
    // its WAIT was cut off with the connection, and the worker parked "a" as failed. The
    // park wrote a's sent part into b's record, so b's answer looked sent and was never sent.
    const scripts = new SchedulerScripts(db.redis, db.keys);
    const lease = await held(scripts, ["a", "b"]);
    await lease.finish({
      head: event("a"),
      idleSeconds: 60,
      draining: false,
      wantHistory: false,
      historyCap: 10,
    });
    const reply = await lease.park({
      writes: { sent: { "part:0": "chat:1" } },
      head: event("a"),
      delayMs: 5000,
      verdict: "retry",
      reason: "Command aborted due to connection close",
      deadlineMs: 60_000,
      letterId: "x",
    });
    expect(reply.kind).toBe("over");
    expect(await db.redis.hgetall(db.schedulerKeys.turn(room))).toEqual({ computing: "1" });
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("b")]);
    // Handed back due now, not after the failed attempt's backoff.
    const due = await db.redis.zscore(
      db.schedulerKeys.laneShard(LANE, db.schedulerKeys.shardOf(room)).pending,
      room,
    );
    expect(Number(due)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("a holder whose lease ran out while nobody claimed the room still records what it sent; after a claim it writes nothing", async () => {
    // Run out as Redis judges it: the room's running score (its lease's end) behind Redis's clock.
    const running = db.schedulerKeys.laneShard(LANE, db.schedulerKeys.shardOf(room)).running;
    const runOut = (what: string) =>
      waitFor(
        async () => {
          const [seconds, micros] = await db.redis.time();
          const end = await db.redis.zscore(running, room);
          return end !== null && Number(end) < Number(seconds) * 1000 + Number(micros) / 1000;
        },
        undefined,
        `${what} run out`,
      );
    // A failover or a master refusing writes stops every renewal for longer than a lease.
    const short = { leaseMs: 150, turnRecordMs: 60_000 };
    await db.scheduler.intake.enqueue({
      room,
      lane: LANE,
      eventId: "a",
      entry: event("a"),
      dedupeMs: 60_000,
    });
    await db.scheduler.claim({ room, lane: LANE, token: "t1", ...short });
    const lease = new RoomLease(new SchedulerScripts(db.redis, db.keys), room, LANE, "t1", short);
    await runOut("t1's lease");
    // The holder judges its own lease on its own clock, from when it last heard from Redis.
    await waitFor(() => lease.lost, undefined, "the holder to count its lease lost");
    expect(lease.taken).toBe(false);
    const park = (token: RoomLease) =>
      token.park({
        writes: { sent: { "part:0": "chat:7" } },
        head: event("a"),
        delayMs: 0,
        verdict: "wait",
        reason: "lease unconfirmed",
        deadlineMs: 60_000,
        letterId: "y",
      });
    expect((await park(lease)).kind).toBe("parked");
    expect(await db.redis.hget(db.schedulerKeys.turn(room), "part:part:0")).toBe("chat:7");

    // Another worker claims it (its lease ran out again): the first holder's writes are refused.
    await db.scheduler.claim({ room, lane: LANE, token: "t2", ...short });
    await runOut("t2's lease");
    await db.scheduler.claim({ room, lane: LANE, token: "t3", ...short });
    const stale = new RoomLease(new SchedulerScripts(db.redis, db.keys), room, LANE, "t2", short);
    await runOut("t3's lease");
    expect((await park(stale)).kind).toBe("lost");
    expect(stale.taken).toBe(true);
  });
});
