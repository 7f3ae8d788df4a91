import type { ZodType } from "zod";
import { durableWrite, NO_WAIT, type Durability } from "../sessions/durable-write.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { defineScripts, type ScriptName } from "./lua-scripts.js";
import {
  ClaimReplySchema,
  EnqueueReplySchema,
  FinishReplySchema,
  FloodReplySchema,
  ParkReplySchema,
  PeekReplySchema,
  ReleaseReplySchema,
  RenewReplySchema,
  RequeueReplySchema,
  StepReplySchema,
  type ClaimReply,
  type EnqueueReply,
  type FinishReply,
  type FloodReply,
  type ParkReply,
  type PeekReply,
  type ReleaseReply,
  type RequeueReply,
  type StepReply,
} from "./scheduler-replies.js";
import type { ClaimArgs, EnqueueArgs, FloodArgs, LeaseRef, TurnWrites } from "./scheduler-args.js";

/**
 * The scheduler's Lua scripts as typed calls: one method per script, each building
 * its KEYS (only from `Keys`) and ARGV from a named object and parsing the reply
 * into a discriminated union. Writes that a caller relies on afterwards (enqueue,
 * step, finish, park, release, requeue) wait for the replicas `durability` names in
 * the same round trip (a pipeline of the script and WAIT, on the script's node), and
 * throw ReplicaWaitError when too few acknowledged. Nobody else knows a position.
 */
export class SchedulerScripts {
  constructor(
    private readonly redis: RedisClient,
    readonly keys: Keys,
    readonly durability: Durability = NO_WAIT,
  ) {
    defineScripts(redis);
  }

  /** enqueue-event.lua: de-duplicate, check flood limits (when given), append, make pending. */
  enqueue(a: EnqueueArgs): Promise<EnqueueReply> {
    return this.run("rgEnqueue", EnqueueReplySchema, true, this.enqueueArgs(a));
  }

  /**
   * enqueue-event.lua, then claim-room.lua for the same room under `claim.token`, in
   * one round trip to the room's shard (and one WAIT): a message for a room that this
   * process has a free slot for is taken in the call that queues it, a round trip
   * before its answer less. The claim takes whatever the room's state allows (its
   * head turn, due); "held", "later" and "gone" leave it to the usual paths.
   */
  async enqueueAndClaim(
    a: EnqueueArgs,
    claim: ClaimArgs,
  ): Promise<{ queued: EnqueueReply; claimed: ClaimReply }> {
    const [queued, claimed] = await durableWrite(this.redis, this.durability, this.keys.room(a.room).seen, [
      ["rgEnqueue", ...flat(this.enqueueArgs(a))],
      ["rgClaim", ...flat(this.claimArgs({ ...claim, room: a.room, lane: a.lane }))],
    ]);
    return { queued: EnqueueReplySchema.parse(queued), claimed: ClaimReplySchema.parse(claimed) };
  }

  private enqueueArgs(a: EnqueueArgs): [string[], (string | number)[]] {
    const room = this.keys.room(a.room);
    const lane = this.keys.laneShard(a.lane, room.shard);
    const user = a.flood?.userId ?? "-";
    return [
      [
        room.seen,
        room.inbox,
        lane.pending,
        lane.running,
        this.keys.turnRate(a.room, user),
        this.keys.notice(a.room, "queue", user),
        this.keys.notice(a.room, "rate", user),
      ],
      [
        a.eventId,
        a.entry,
        a.dedupeMs,
        a.room,
        a.flood ? "1" : "",
        a.flood?.turnsPerMinute ?? 0,
        a.flood?.roomQueueCap ?? 0,
      ],
    ];
  }

  /** check-flood.lua: the flood limits alone, for an event checked before it is built. */
  checkFlood(a: { room: string } & FloodArgs): Promise<FloodReply> {
    const keys = this.keys;
    return this.run("rgFloodCheck", FloodReplySchema, false, [
      [
        keys.inbox(a.room),
        keys.turnRate(a.room, a.userId),
        keys.notice(a.room, "queue", a.userId),
        keys.notice(a.room, "rate", a.userId),
      ],
      [a.turnsPerMinute, a.roomQueueCap],
    ]);
  }

  /** claim-room.lua: take a due (or abandoned) room under a new lease and read its head turn. */
  claim(a: ClaimArgs & { room: string; lane: string }): Promise<ClaimReply> {
    return this.run("rgClaim", ClaimReplySchema, false, this.claimArgs(a));
  }

  private claimArgs(a: ClaimArgs & { room: string; lane: string }): [string[], (string | number)[]] {
    const room = this.keys.room(a.room);
    const lane = this.keys.laneShard(a.lane, room.shard);
    return [
      [lane.pending, lane.running, room.lease, room.inbox, room.session, room.turn],
      [a.room, a.token, a.leaseMs, a.turnRecordMs],
    ];
  }

  /** peek-shard.lua: the due and abandoned rooms of one lane in one shard, and when the next is due. */
  peek(a: { lane: string; shard: number; limit: number }): Promise<PeekReply> {
    const lane = this.keys.laneShard(a.lane, a.shard);
    return this.run("rgPeek", PeekReplySchema, false, [[lane.pending, lane.running], [a.limit]]);
  }

  /** turn-step.lua: the fenced commit and "sending" mark before one send. */
  step(a: { lease: LeaseRef; writes: TurnWrites; part: string }): Promise<StepReply> {
    const room = this.keys.room(a.lease.room);
    const lane = this.keys.laneShard(a.lease.lane, room.shard);
    return this.run("rgStep", StepReplySchema, true, [
      [room.lease, lane.running, room.session, room.history, room.offerRefs, room.turn],
      [a.lease.room, a.lease.token, a.writes.commit, a.writes.sent, a.part],
    ]);
  }

  /** finish-turn.lua: end a delivered turn; let go of the room or keep it for its next turn. */
  finish(a: {
    lease: LeaseRef;
    writes: TurnWrites;
    head: string;
    session: string;
    offerLinks: string;
    idleSeconds: number;
    leaseMs: number;
    draining: boolean;
    wantHistory: boolean;
    turnRecordMs: number;
  }): Promise<FinishReply> {
    return this.run("rgFinish", FinishReplySchema, true, [
      this.turnKeys(a.lease),
      [
        a.lease.room,
        a.lease.token,
        a.writes.commit,
        a.writes.sent,
        a.head,
        a.session,
        a.offerLinks,
        a.idleSeconds,
        a.leaseMs,
        a.draining ? "1" : "",
        a.wantHistory ? "1" : "",
        a.turnRecordMs,
      ],
    ]);
  }

  /** park-turn.lua: give the room back until it may resume, or dead-letter its head turn. */
  park(a: {
    lease: LeaseRef;
    writes: TurnWrites;
    /** The send slot booked for a part that waits for it, kept for the next holder. */
    booked?: { part: string; member: string } | undefined;
    head: string;
    delayMs: number;
    kind: "wait" | "fail" | "final";
    reason: string;
    deadlineMs: number;
    letterId: string;
    turnRecordMs: number;
  }): Promise<ParkReply> {
    const shard = this.keys.room(a.lease.room).shard;
    return this.run("rgPark", ParkReplySchema, true, [
      [...this.turnKeys(a.lease), this.keys.deadLetters(shard), this.keys.deadLetterIndex(shard)],
      [
        a.lease.room,
        a.lease.token,
        a.writes.commit,
        a.writes.sent,
        a.booked?.part ?? "",
        a.head,
        Math.max(0, Math.ceil(a.delayMs)),
        a.kind,
        a.reason,
        a.deadlineMs,
        a.letterId,
        a.turnRecordMs,
        a.lease.lane,
        a.booked?.member ?? "",
      ],
    ]);
  }

  /** release-room.lua: hand the room back at once, pending again in `toLane` (default: its own). */
  release(a: { lease: LeaseRef; toLane?: string }): Promise<ReleaseReply> {
    const room = this.keys.room(a.lease.room);
    const from = this.keys.laneShard(a.lease.lane, room.shard);
    const to = this.keys.laneShard(a.toLane ?? a.lease.lane, room.shard);
    return this.run("rgRelease", ReleaseReplySchema, true, [
      [room.lease, from.running, to.pending, room.inbox],
      [a.lease.room, a.lease.token],
    ]);
  }

  /** renew-leases.lua: extend leases of one lane in one shard; true per lease still ours. */
  async renew(a: { lane: string; shard: number; leases: LeaseRef[]; leaseMs: number }): Promise<boolean[]> {
    const lane = this.keys.laneShard(a.lane, a.shard);
    return this.run("rgRenew", RenewReplySchema, false, [
      [lane.running, ...a.leases.map((l) => this.keys.lease(l.room))],
      [a.leaseMs, ...a.leases.flatMap((l) => [l.room, l.token])],
    ]);
  }

  /** requeue-dead-letter.lua: put a dead letter back at the end of its room's inbox. */
  requeue(a: { id: string; room: string; lane: string; entry: string }): Promise<RequeueReply> {
    const room = this.keys.room(a.room);
    const lane = this.keys.laneShard(a.lane, room.shard);
    return this.run("rgRequeue", RequeueReplySchema, true, [
      [
        this.keys.deadLetters(room.shard),
        this.keys.deadLetterIndex(room.shard),
        room.inbox,
        lane.pending,
        lane.running,
      ],
      [a.id, a.room, a.entry],
    ]);
  }

  /** Wakes one idle worker of the lane for a room that became pending (not a script: one RPUSH, popped FIFO). */
  async wake(lane: string, room: string): Promise<void> {
    await this.redis.rpush(this.keys.wake(lane), room);
  }

  /**
   * Tells a room's running turn that an event was queued behind it (one PUBLISH; the
   * inbox stays the record, so a signal nobody hears loses nothing).
   */
  async signal(room: string): Promise<void> {
    await this.redis.publish(this.keys.roomSignal(room), "queued");
  }

  /** The keys a turn's end touches (finish-turn.lua and park-turn.lua take them first, in this order). */
  private turnKeys(lease: LeaseRef): string[] {
    const room = this.keys.room(lease.room);
    const lane = this.keys.laneShard(lease.lane, room.shard);
    return [
      room.lease,
      lane.running,
      lane.pending,
      room.session,
      room.history,
      room.offerRefs,
      room.turn,
      room.inbox,
    ];
  }

  private async run<T>(
    name: ScriptName,
    schema: ZodType<T>,
    durable: boolean,
    [keys, args]: [string[], (string | number)[]],
  ): Promise<T> {
    if (!durable) {
      const call = (this.redis as unknown as Record<ScriptName, ScriptCall>)[name];
      return schema.parse(await call.call(this.redis, ...flat([keys, args])));
    }
    const [reply] = await durableWrite(this.redis, this.durability, keys[0]!, [
      [name, ...flat([keys, args])],
    ]);
    return schema.parse(reply);
  }
}

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

/** A script's keys and arguments as one command's arguments: the key count first. */
function flat([keys, args]: [string[], (string | number)[]]): (string | number)[] {
  return [keys.length, ...keys, ...args];
}
