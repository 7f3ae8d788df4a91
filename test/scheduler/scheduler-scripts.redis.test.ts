import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import { type LeaseRef } from "../../src/scheduler/scheduler-args.js";
import { testRedis, type TestRedis } from "../support/redis.js";

/**
 * The contract of each scheduler script, through its one typed method: what it
 * writes and what it answers, on a real Redis. One describe per script.
 */
let db: TestRedis;
let s: SchedulerScripts;
let n = 0;
let room: string;
const LANE = "telegram";
const NO_WRITES = {};
const event = (id: string) => JSON.stringify({ eventId: id });

beforeAll(async () => {
  db = await testRedis();
  s = db.scheduler;
});
afterAll(async () => db.cleanup());
beforeEach(() => {
  n += 1;
  room = `telegram:1:${1000 + n}`;
});

const lane = () => db.schedulerKeys.laneShard(LANE, db.schedulerKeys.shardOf(room));
const enqueue = (id: string) =>
  s.intake.enqueue({ room, lane: LANE, eventId: id, entry: event(id), dedupeMs: 60_000 });
const claim = (token: string) => s.claim({ room, lane: LANE, token, leaseMs: 5000, turnRecordMs: 60_000 });
const lease = (token: string): LeaseRef => ({ room, lane: LANE, token });
const commit = (eventId: string) => ({
  session: JSON.stringify({ v: eventId }),
  idleSeconds: 60,
  append: [JSON.stringify({ turn: eventId })],
  historyCap: 10,
  reset: false,
  outcome: JSON.stringify({ o: eventId }),
  eventId,
});

describe("enqueue-events", () => {
  it("queues a batch in order, once per event id in the shard, and claims a room once its events are in", async () => {
    const other = `${room}:b`;
    const batch = await s.intake.enqueueEvents(LANE, db.schedulerKeys.shardOf(room), 60_000, [
      {
        room,
        eventId: "a1",
        entry: event("a1"),
        claim: { token: "t1", leaseMs: 5000, turnRecordMs: 60_000 },
      },
      { room, eventId: "a2", entry: event("a2") },
      { room, eventId: "a1", entry: event("a1") },
    ]);
    expect(batch.events).toEqual([
      { kind: "queued", becamePending: true },
      { kind: "queued", becamePending: false },
      { kind: "duplicate" },
    ]);
    expect(batch.claims).toEqual([
      { room, reply: expect.objectContaining({ kind: "claimed", head: event("a1"), takeover: false }) },
    ]);
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("a1"), event("a2")]);
    // Held now: a later event neither makes it pending nor is claimed again.
    const later = await s.intake.enqueueEvents(LANE, db.schedulerKeys.shardOf(room), 60_000, [
      {
        room,
        eventId: "a3",
        entry: event("a3"),
        claim: { token: "t2", leaseMs: 5000, turnRecordMs: 60_000 },
      },
    ]);
    expect(later).toEqual({
      events: [{ kind: "queued", becamePending: false }],
      claims: [{ room, reply: { kind: "held" } }],
    });
    expect(await db.redis.zscore(lane().pending, room)).toBeNull();
    // An id is its room's: another room's event with the same id is queued.
    expect(
      await s.intake.enqueue({
        room: other,
        lane: LANE,
        eventId: "a1",
        entry: event("a1"),
        dedupeMs: 60_000,
      }),
    ).toEqual({
      kind: "queued",
      becamePending: true,
    });
  });

  it("queues once per event id, makes an idle room pending once, and refuses over the flood limits", async () => {
    expect(await enqueue("a")).toEqual({ kind: "queued", becamePending: true });
    expect(await enqueue("a")).toEqual({ kind: "duplicate" });
    expect(await enqueue("b")).toEqual({ kind: "queued", becamePending: false });
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("a"), event("b")]);
    expect(await db.redis.zscore(lane().pending, room)).not.toBeNull();
    const flood = { userId: "tg:1", turnsPerMinute: 100, roomQueueCap: 2 };
    const refused = await s.intake.enqueue({
      room,
      lane: LANE,
      eventId: "c",
      entry: event("c"),
      dedupeMs: 60_000,
      flood,
    });
    expect(refused).toEqual({ kind: "refused", limit: "queue", noticeDue: true });
  });

  it("does not make a held room pending: its holder drains it", async () => {
    await enqueue("a");
    await claim("t1");
    expect(await enqueue("b")).toEqual({ kind: "queued", becamePending: false });
    expect(await db.redis.zscore(lane().pending, room)).toBeNull();
  });
});

describe("check-flood", () => {
  it("counts a person's turns in the room's shard and refuses the excess with one notice", async () => {
    const a = { room, userId: "tg:2", turnsPerMinute: 1, roomQueueCap: 10 };
    expect(await s.intake.checkFlood(a)).toEqual({ kind: "admitted" });
    expect(await s.intake.checkFlood(a)).toEqual({ kind: "refused", limit: "rate", noticeDue: true });
    expect(await s.intake.checkFlood(a)).toEqual({ kind: "refused", limit: "rate", noticeDue: false });
  });
});

describe("claim-room", () => {
  it("claims a due room with its head, session and record; refuses a held, unknown or not yet due room", async () => {
    expect(await claim("t0")).toEqual({ kind: "gone" });
    await enqueue("a");
    await db.redis.set(db.schedulerKeys.session(room), "S");
    const claimed = await claim("t1");
    expect(claimed).toMatchObject({ kind: "claimed", head: event("a"), session: "S", takeover: false });
    // The head turn is being computed from now on: a process death is counted.
    expect(claimed.kind === "claimed" && claimed.record.computing).toBe("1");
    expect(await claim("t2")).toEqual({ kind: "held" });
    const parked = `${room}:x`;
    const parkedLane = db.schedulerKeys.laneShard(LANE, db.schedulerKeys.shardOf(parked));
    await db.redis.zadd(parkedLane.pending, Date.now() + 60_000, parked);
    const later = await s.claim({
      room: parked,
      lane: LANE,
      token: "t3",
      leaseMs: 5000,
      turnRecordMs: 60_000,
    });
    expect(later.kind).toBe("later");
  });

  it("takes over a room whose lease expired", async () => {
    await enqueue("a");
    await claim("dead");
    await db.redis.zadd(lane().running, Date.now() - 1, room);
    expect(await claim("alive")).toMatchObject({ kind: "claimed", takeover: true });
    expect(await db.redis.get(db.schedulerKeys.lease(room))).toBe("alive");
  });
});

describe("peek-shard", () => {
  it("names the due rooms and expired leases of one lane in one shard, and when the next is due", async () => {
    await enqueue("a");
    const look = await s.peek({ lane: LANE, shard: db.schedulerKeys.shardOf(room), limit: 100 });
    expect(look.due).toContain(room);
    await claim("t");
    const held = await s.peek({ lane: LANE, shard: db.schedulerKeys.shardOf(room), limit: 100 });
    expect(held.due).not.toContain(room);
    expect(held.nextInMs).toBeGreaterThan(0);
    expect(held.nextRoom).toBeUndefined();
  });

  it("names the pending room that comes due next", async () => {
    await enqueue("a");
    await claim("t");
    await s.park({
      lease: lease("t"),
      writes: NO_WRITES,
      head: event("a"),
      delayMs: 3000,
      verdict: "wait",
      reason: "send window full; slot booked",
      deadlineMs: 60_000,
      letterId: `dl-${room}`,
      turnRecordMs: 60_000,
    });
    const look = await s.peek({ lane: LANE, shard: db.schedulerKeys.shardOf(room), limit: 100 });
    expect(look).toMatchObject({ due: [], nextRoom: room });
    expect(look.nextInMs).toBeGreaterThan(2000);
  });
});

describe("turn-step", () => {
  it("commits once and marks the part, only for the lease holder", async () => {
    await enqueue("a");
    await claim("t1");
    const writes = { commit: commit("a") };
    expect(await s.step({ lease: lease("t1"), writes, part: "p0" })).toEqual({ kind: "stepped" });
    // Retried after a lost reply: the history does not get the turn twice.
    expect(await s.step({ lease: lease("t1"), writes, part: "p0" })).toEqual({ kind: "stepped" });
    expect(await db.redis.llen(db.schedulerKeys.history(room))).toBe(1);
    expect(await db.redis.hget(db.schedulerKeys.turn(room), "sending:p0")).toMatch(/ t1$/);
    expect(await db.redis.hget(db.schedulerKeys.turn(room), "computing")).toBeNull();
    expect(await s.step({ lease: lease("thief"), writes: NO_WRITES, part: "p1" })).toEqual({ kind: "lost" });
  });
});

describe("finish-turn", () => {
  const more = { idleSeconds: 60, draining: false, wantHistory: false, historyCap: 10, turnRecordMs: 60_000 };

  it("pops the head and returns the next turn while events are left, then lets go", async () => {
    await enqueue("a");
    await enqueue("b");
    await claim("t1");
    const next = await s.finish({ lease: lease("t1"), head: event("a"), ...more });
    expect(next).toMatchObject({ kind: "next", head: event("b"), again: false });
    // The next turn is being computed from now on: a process death is counted.
    expect(await db.redis.hgetall(db.schedulerKeys.turn(room))).toEqual({ computing: "1" });
    expect(await s.finish({ lease: lease("t1"), head: event("b"), ...more })).toEqual({
      kind: "released",
      leftPending: false,
    });
    expect(
      await db.redis.exists(
        db.schedulerKeys.lease(room),
        db.schedulerKeys.inbox(room),
        db.schedulerKeys.turn(room),
      ),
    ).toBe(0);
    expect(await s.finish({ lease: lease("t1"), head: event("b"), ...more })).toEqual({ kind: "lost" });
  });

  it("sent again after its reply was lost, writes nothing twice and returns the next turn's record as it is", async () => {
    await enqueue("a");
    await enqueue("b");
    await claim("t1");
    const args = { lease: lease("t1"), head: event("a"), commit: commit("a"), ...more };
    expect(await s.finish(args)).toMatchObject({ kind: "next", head: event("b"), again: false });
    // What the next turn's holder wrote meanwhile stays as it is.
    await db.redis.hset(db.schedulerKeys.turn(room), "sending:p0", "1 t1");
    expect(await s.finish(args)).toMatchObject({
      kind: "next",
      head: event("b"),
      again: true,
      record: { computing: "1", "sending:p0": "1 t1" },
      session: JSON.stringify({ v: "a" }),
    });
    expect(await db.redis.llen(db.schedulerKeys.history(room))).toBe(1);
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("b")]);
    expect(await db.redis.hgetall(db.schedulerKeys.turn(room))).toEqual({
      computing: "1",
      "sending:p0": "1 t1",
    });
  });
});

describe("park-turn", () => {
  const park = (token: string, verdict: "wait" | "retry" | "dead", deadlineMs = 60_000) =>
    s.park({
      lease: lease(token),
      writes: NO_WRITES,
      head: event("a"),
      delayMs: 5000,
      verdict,
      reason: `${verdict} reason`,
      deadlineMs,
      letterId: `dl-${room}`,
      turnRecordMs: 60_000,
    });

  it("parks until the delay, counting failed attempts; a stepped part keeps its mark (its answer is unknown)", async () => {
    await enqueue("a");
    await claim("t1");
    await s.step({ lease: lease("t1"), writes: NO_WRITES, part: "p0" });
    expect(await park("t1", "retry")).toMatchObject({ kind: "parked", attempts: 1 });
    expect(await db.redis.hget(db.schedulerKeys.turn(room), "sending:p0")).toMatch(/^\d+ t1$/);
    expect(Number(await db.redis.zscore(lane().pending, room))).toBeGreaterThan(Date.now() + 3000);
    expect(await claim("t2")).toMatchObject({ kind: "later" });
  });

  it("keeps the slot booked for a waiting part for the next holder, whose step takes it", async () => {
    await enqueue("a");
    await claim("t1");
    await s.park({
      lease: lease("t1"),
      writes: NO_WRITES,
      booked: { part: "p0", member: "slot-1" },
      head: event("a"),
      delayMs: 0,
      verdict: "wait",
      reason: "send window full; slot booked",
      deadlineMs: 60_000,
      letterId: `dl-${room}`,
      turnRecordMs: 60_000,
    });
    const claimed = await claim("t2");
    expect(claimed).toMatchObject({ kind: "claimed", record: { "booked:p0": "slot-1" } });
    await s.step({ lease: lease("t2"), writes: NO_WRITES, part: "p0" });
    expect(await db.redis.hget(db.schedulerKeys.turn(room), "booked:p0")).toBeNull();
  });

  it("dead-letters a failure no retry can fix in the room's shard, keeping its lane, and moves on", async () => {
    await enqueue("a");
    await enqueue("b");
    await claim("t1");
    expect(await park("t1", "dead")).toMatchObject({ kind: "dead", leftPending: true });
    const shard = db.schedulerKeys.shardOf(room);
    const letter = JSON.parse((await db.redis.hget(db.schedulerKeys.deadLetters(shard), `dl-${room}`))!);
    expect(letter).toMatchObject({ room, lane: LANE, event: event("a"), reason: "dead reason" });
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("b")]);
  });
});

describe("release-room", () => {
  it("hands a held room back, pending in the lane it is given when events are left", async () => {
    await enqueue("a");
    await claim("t1");
    expect(await s.release({ lease: lease("t1"), toLane: "matrix-e2ee" })).toEqual({
      kind: "released",
      leftPending: true,
    });
    const other = db.schedulerKeys.laneShard("matrix-e2ee", db.schedulerKeys.shardOf(room));
    expect(await db.redis.zscore(other.pending, room)).not.toBeNull();
    expect(await s.release({ lease: lease("t1") })).toEqual({ kind: "lost" });
  });
});

describe("renew-leases", () => {
  it("extends the caller's leases and reports the ones it lost", async () => {
    await enqueue("a");
    await claim("t1");
    const shard = db.schedulerKeys.shardOf(room);
    const renewed = await s.renew({
      lane: LANE,
      shard,
      leases: [lease("t1"), lease("not-mine")],
      leaseMs: 9000,
    });
    expect(renewed).toEqual([true, false]);
    expect(await db.redis.pttl(db.schedulerKeys.lease(room))).toBeGreaterThan(5000);
  });
});

describe("requeue-dead-letter", () => {
  it("puts a dead letter back at the end of its room's inbox and makes the room pending", async () => {
    const shard = db.schedulerKeys.shardOf(room);
    await db.redis.hset(db.schedulerKeys.deadLetters(shard), "x", "{}");
    expect(await s.requeue({ id: "x", room, lane: LANE, entry: event("x") })).toEqual({
      kind: "requeued",
      becamePending: true,
    });
    expect(await db.redis.lrange(db.schedulerKeys.inbox(room), 0, -1)).toEqual([event("x")]);
    expect(await s.requeue({ id: "x", room, lane: LANE, entry: event("x") })).toEqual({ kind: "missing" });
  });
});
