import { NO_WAIT, type Durability } from "./durable-write.js";
import { schedulerKeysOf, type KeyLayout, type SchedulerKeys } from "./scheduler-keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { ClaimArgs, LeaseRef, ParkVerdict, TurnWrites } from "./scheduler-args.js";
import type {
  ClaimReply,
  FinishReply,
  ParkReply,
  PeekReply,
  ReleaseReply,
  RequeueReply,
  StepReply,
} from "./scheduler-replies.js";
import type { MoreKeys } from "./lua-script.js";
import {
  callScript,
  moreKeysOf,
  type TURN_KEYS,
  type ArgsOf,
  type KeysOf,
  type ReplyOf,
  type ScriptName,
} from "./scheduler-declarations.js";
import { IntakeScripts } from "./intake-scripts.js";

/**
 * The scheduler's scripts as typed calls (declared in src/scheduler/scheduler-declarations.ts):
 * one method per script, each building its keys (only from `SchedulerKeys`) and its
 * argument table from named values, and parsing the reply; the enqueue's calls are in
 * `intake`. Writes that a caller relies on afterwards (step, finish, park, release, requeue) wait for the replicas `durability` names in the same round trip
 * (a pipeline of the script and WAIT, on the script's node), and throw
 * ReplicaWaitError when too few acknowledged.
 */
export class SchedulerScripts {
  /** The calls that queue events (enqueue-events.lua, check-flood.lua). */
  readonly intake: IntakeScripts;
  readonly keys: SchedulerKeys;

  constructor(
    private readonly redis: RedisClient,
    layout: KeyLayout,
    readonly durability: Durability = NO_WAIT,
  ) {
    const keys = (this.keys = schedulerKeysOf(layout));
    this.intake = new IntakeScripts(redis, keys, durability);
  }

  /** claim-room.lua: take a due (or abandoned) room under a new lease and read its head turn. */
  claim(a: ClaimArgs & { room: string; lane: string }): Promise<ClaimReply> {
    const room = this.keys.room(a.room);
    const lane = this.keys.laneShard(a.lane, room.shard);
    return this.call(
      "claimRoom",
      {
        pending: lane.pending,
        running: lane.running,
        lease: room.lease,
        inbox: room.inbox,
        session: room.session,
        turn: room.turn,
      },
      {
        room: a.room,
        token: a.token,
        leaseMs: a.leaseMs,
        turnRecordMs: a.turnRecordMs,
        ...(a.takeoverHoldMs ? { takeoverHoldMs: a.takeoverHoldMs } : {}),
      },
      false,
    );
  }

  /** peek-shard.lua: the due and abandoned rooms of one lane in one shard, and when the next is due. */
  peek(a: { lane: string; shard: number; limit: number }): Promise<PeekReply> {
    const lane = this.keys.laneShard(a.lane, a.shard);
    return this.call(
      "peekShard",
      { pending: lane.pending, running: lane.running },
      { limit: a.limit },
      false,
    );
  }

  /** turn-step.lua: the fenced commit and "sending" mark before one send. */
  step(a: { lease: LeaseRef; writes: TurnWrites; part: string }): Promise<StepReply> {
    const room = this.keys.room(a.lease.room);
    const lane = this.keys.laneShard(a.lease.lane, room.shard);
    return this.call(
      "turnStep",
      {
        lease: room.lease,
        running: lane.running,
        session: room.session,
        history: room.history,
        offers: room.offerRefs,
        turn: room.turn,
      },
      { room: a.lease.room, token: a.lease.token, ...a.writes, ...(a.part ? { part: a.part } : {}) },
      true,
    );
  }

  /** finish-turn.lua: end a delivered turn; let go of the room or keep it for its next turn. */
  finish(a: {
    lease: LeaseRef;
    head: string;
    commit?: TurnWrites["commit"];
    session?: string | undefined;
    offerLinks?: Record<string, string> | undefined;
    idleSeconds: number;
    draining: boolean;
    wantHistory: boolean;
    historyCap: number;
    turnRecordMs: number;
  }): Promise<FinishReply> {
    const { lease, ...rest } = a;
    return this.call(
      "finishTurn",
      this.turnKeys(lease),
      { room: lease.room, token: lease.token, ...rest },
      true,
    );
  }

  /** park-turn.lua: give the room back until it may resume, or dead-letter its head turn. */
  park(a: {
    lease: LeaseRef;
    writes: TurnWrites;
    /** The send slot booked for a part that waits for it, kept for the next holder. */
    booked?: { part: string; member: string } | undefined;
    head: string;
    delayMs: number;
    verdict: ParkVerdict;
    reason: string;
    deadlineMs: number;
    letterId: string;
    turnRecordMs: number;
  }): Promise<ParkReply> {
    const { lease, writes, ...rest } = a;
    const shard = this.keys.shardOf(lease.room);
    return this.call(
      "parkTurn",
      {
        ...this.turnKeys(lease),
        letters: this.keys.deadLetters(shard),
        letterIndex: this.keys.deadLetterIndex(shard),
      },
      { room: lease.room, lane: lease.lane, token: lease.token, ...writes, ...rest },
      true,
    );
  }

  /** release-room.lua: hand the room back at once, pending again in `toLane` (default: its own). */
  release(a: { lease: LeaseRef; toLane?: string }): Promise<ReleaseReply> {
    const room = this.keys.room(a.lease.room);
    const from = this.keys.laneShard(a.lease.lane, room.shard);
    const to = this.keys.laneShard(a.toLane ?? a.lease.lane, room.shard);
    return this.call(
      "releaseRoom",
      { lease: room.lease, running: from.running, pending: to.pending, inbox: room.inbox },
      { room: a.lease.room, token: a.lease.token },
      true,
    );
  }

  /** renew-leases.lua: extend leases of one lane in one shard; true per lease still ours. */
  async renew(a: { lane: string; shard: number; leases: LeaseRef[]; leaseMs: number }): Promise<boolean[]> {
    const named = { running: this.keys.laneShard(a.lane, a.shard).running };
    const more = moreKeysOf("renewLeases", named);
    const reply = await this.call(
      "renewLeases",
      named,
      {
        leaseMs: a.leaseMs,
        leases: a.leases.map((l) => ({
          room: l.room,
          token: l.token,
          leaseKey: more.of(this.keys.lease(l.room)),
        })),
      },
      false,
      more,
    );
    return reply.renewed;
  }

  /** requeue-dead-letter.lua: put a dead letter back at the end of its room's inbox. */
  requeue(a: { id: string; room: string; lane: string; entry: string }): Promise<RequeueReply> {
    const room = this.keys.room(a.room);
    const lane = this.keys.laneShard(a.lane, room.shard);
    return this.call(
      "requeueDeadLetter",
      {
        letters: this.keys.deadLetters(room.shard),
        letterIndex: this.keys.deadLetterIndex(room.shard),
        inbox: room.inbox,
        pending: lane.pending,
        running: lane.running,
      },
      { id: a.id, room: a.room, entry: a.entry },
      true,
    );
  }

  /** How many events wait in the room's inbox (its running turn's included). */
  inboxLength(room: string): Promise<number> {
    return this.redis.llen(this.keys.inbox(room));
  }

  /**
   * Pops up to `count` rooms woken in the lane (in the order they became pending),
   * blocking `client` (a connection of its own) for at most `blockMs`; null when none came.
   */
  async popWoken(
    client: RedisClient,
    lane: string,
    count: number,
    blockMs: number,
  ): Promise<string[] | null> {
    const key = this.keys.wake(lane);
    const got = (await client.call("BLMPOP", blockMs / 1000, 1, key, "LEFT", "COUNT", count)) as
      [string, string[]] | null;
    return got ? got[1] : null;
  }

  /**
   * Wakes idle workers of the lane for rooms that became pending (not a script: one
   * RPUSH of them all, popped FIFO).
   */
  async wake(lane: string, ...rooms: string[]): Promise<void> {
    if (rooms.length > 0) await this.redis.rpush(this.keys.wake(lane), ...rooms);
  }

  /** The keys a turn's end touches, by name. */
  private turnKeys(lease: LeaseRef): Record<(typeof TURN_KEYS)[number], string> {
    const room = this.keys.room(lease.room);
    const lane = this.keys.laneShard(lease.lane, room.shard);
    return {
      lease: room.lease,
      running: lane.running,
      pending: lane.pending,
      session: room.session,
      history: room.history,
      offers: room.offerRefs,
      turn: room.turn,
      inbox: room.inbox,
    };
  }

  private call<N extends ScriptName>(
    name: N,
    keys: KeysOf<N>,
    args: ArgsOf<N>,
    durable: boolean,
    more?: MoreKeys,
  ): Promise<ReplyOf<N>> {
    return callScript(this.redis, name, keys, args, durable ? this.durability : undefined, more);
  }
}
