import type { z } from "zod";
import { NO_WAIT, type Durability } from "./durable-write.js";
import type { SchedulerKeys } from "./scheduler-keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { declareScript, runScript, type LuaScript } from "./lua-script.js";
import {
  CheckFloodArgsSchema,
  ClaimArgsSchema,
  EnqueueEventsArgsSchema,
  FinishArgsSchema,
  ParkArgsSchema,
  PeekArgsSchema,
  ReleaseArgsSchema,
  RenewArgsSchema,
  RequeueArgsSchema,
  StepArgsSchema,
  type ClaimArgs,
  type EnqueueArgs,
  type FloodArgs,
  type LeaseRef,
  type ParkVerdict,
  type TurnWrites,
} from "./scheduler-args.js";
import {
  ClaimReplySchema,
  EnqueueEventsReplySchema,
  FinishReplySchema,
  FloodReplySchema,
  ParkReplySchema,
  PeekReplySchema,
  ReleaseReplySchema,
  RenewReplySchema,
  RequeueReplySchema,
  StepReplySchema,
  type ClaimReply,
  type EnqueueEventsReply,
  type EnqueueReply,
  type FinishReply,
  type FloodReply,
  type ParkReply,
  type PeekReply,
  type ReleaseReply,
  type RequeueReply,
  type StepReply,
} from "./scheduler-replies.js";

const lua = (file: string) => new URL(`./lua/${file}.lua`, import.meta.url);
const FENCE = lua("fence");
const FLOOD = lua("flood");
const CLAIM = lua("claim");

/** The room keys a turn's end touches, by the names finish-turn.lua and park-turn.lua give them. */
const TURN_KEYS = ["lease", "running", "pending", "session", "history", "offers", "turn", "inbox"] as const;

/** The scheduler's Lua scripts (src/scheduler/lua), each declared once: keys and arguments by name. */
export const SCHEDULER_SCRIPTS = {
  enqueueEvents: declareScript({
    file: lua("enqueue-events"),
    includes: [FENCE, FLOOD, CLAIM],
    keys: ["pending", "running", "seen"],
    args: EnqueueEventsArgsSchema,
    reply: EnqueueEventsReplySchema,
  }),
  checkFlood: declareScript({
    file: lua("check-flood"),
    includes: [FLOOD],
    keys: ["inbox", "counter", "noticeQueue", "noticeRate"],
    args: CheckFloodArgsSchema,
    reply: FloodReplySchema,
  }),
  claimRoom: declareScript({
    file: lua("claim-room"),
    includes: [FENCE, CLAIM],
    keys: ["pending", "running", "lease", "inbox", "session", "turn"],
    args: ClaimArgsSchema,
    reply: ClaimReplySchema,
  }),
  peekShard: declareScript({
    file: lua("peek-shard"),
    includes: [FENCE],
    keys: ["pending", "running"],
    args: PeekArgsSchema,
    reply: PeekReplySchema,
  }),
  turnStep: declareScript({
    file: lua("turn-step"),
    includes: [FENCE],
    keys: ["lease", "running", "session", "history", "offers", "turn"],
    args: StepArgsSchema,
    reply: StepReplySchema,
  }),
  finishTurn: declareScript({
    file: lua("finish-turn"),
    includes: [FENCE],
    keys: TURN_KEYS,
    args: FinishArgsSchema,
    reply: FinishReplySchema,
  }),
  parkTurn: declareScript({
    file: lua("park-turn"),
    includes: [FENCE],
    keys: [...TURN_KEYS, "letters", "letterIndex"],
    args: ParkArgsSchema,
    reply: ParkReplySchema,
  }),
  releaseRoom: declareScript({
    file: lua("release-room"),
    includes: [FENCE],
    keys: ["lease", "running", "pending", "inbox"],
    args: ReleaseArgsSchema,
    reply: ReleaseReplySchema,
  }),
  renewLeases: declareScript({
    file: lua("renew-leases"),
    includes: [FENCE],
    keys: ["running"],
    args: RenewArgsSchema,
    reply: RenewReplySchema,
  }),
  requeueDeadLetter: declareScript({
    file: lua("requeue-dead-letter"),
    includes: [FENCE],
    keys: ["letters", "letterIndex", "inbox", "pending", "running"],
    args: RequeueArgsSchema,
    reply: RequeueReplySchema,
  }),
} as const;

type Scripts = typeof SCHEDULER_SCRIPTS;
type ArgsOf<S> = S extends LuaScript<string, infer A, unknown> ? A : never;
type KeysOf<S> = S extends LuaScript<infer K, unknown, unknown> ? Record<K, string> : never;

/** One event of an enqueue batch, with the claim of its room when the caller has a slot for it. */
export interface BatchEvent extends Omit<EnqueueArgs, "lane" | "dedupeMs"> {
  claim?: ClaimArgs;
}

/**
 * The scheduler's scripts as typed calls: one method per script, each building its
 * keys (only from `SchedulerKeys`) and its argument table from named values, and parsing the
 * reply. Writes that a caller relies on afterwards (enqueue, step, finish, park,
 * release, requeue) wait for the replicas `durability` names in the same round trip
 * (a pipeline of the script and WAIT, on the script's node), and throw
 * ReplicaWaitError when too few acknowledged.
 */
export class SchedulerScripts {
  constructor(
    private readonly redis: RedisClient,
    readonly keys: SchedulerKeys,
    readonly durability: Durability = NO_WAIT,
  ) {}

  /**
   * enqueue-events.lua: queues the events (all of one lane and one shard) in order,
   * then claims the rooms given a claim; each event's reply and each claim's, in order.
   */
  async enqueueEvents(
    lane: string,
    shard: number,
    dedupeMs: number,
    events: BatchEvent[],
  ): Promise<{ events: EnqueueReply[]; claims: { room: string; reply: ClaimReply }[] }> {
    const keys = this.keys;
    const laneKeys = keys.laneShard(lane, shard);
    const claims = events.filter((e) => e.claim);
    const reply: EnqueueEventsReply = await this.call(
      "enqueueEvents",
      { pending: laneKeys.pending, running: laneKeys.running, seen: keys.seen(shard) },
      {
        dedupeMs,
        events: events.map((e) => ({
          room: e.room,
          id: e.eventId,
          entry: e.entry,
          inbox: keys.inbox(e.room),
          signal: keys.roomSignal(e.room),
          ...(e.flood ? { flood: this.flood(e.room, e.flood) } : {}),
        })),
        ...(claims.length > 0
          ? {
              claims: claims.map((e) => ({
                room: e.room,
                ...e.claim!,
                lease: keys.lease(e.room),
                inbox: keys.inbox(e.room),
                session: keys.session(e.room),
                turn: keys.turn(e.room),
              })),
            }
          : {}),
      },
      true,
    );
    return {
      events: reply.events,
      claims: reply.claims.map((r, i) => ({ room: claims[i]!.room, reply: r })),
    };
  }

  /** enqueue-events.lua for one event. */
  async enqueue(a: EnqueueArgs): Promise<EnqueueReply> {
    const { events } = await this.enqueueEvents(a.lane, this.keys.shardOf(a.room), a.dedupeMs, [a]);
    return events[0]!;
  }

  /** enqueue-events.lua for one event, claiming its room under `claim.token` in the same call. */
  async enqueueAndClaim(
    a: EnqueueArgs,
    claim: ClaimArgs,
  ): Promise<{ queued: EnqueueReply; claimed: ClaimReply }> {
    const { events, claims } = await this.enqueueEvents(a.lane, this.keys.shardOf(a.room), a.dedupeMs, [
      { ...a, claim },
    ]);
    return { queued: events[0]!, claimed: claims[0]!.reply };
  }

  private flood(room: string, f: FloodArgs) {
    return {
      counter: this.keys.turnRate(room, f.userId),
      noticeQueue: this.keys.notice(room, "queue", f.userId),
      noticeRate: this.keys.notice(room, "rate", f.userId),
      perMinute: f.turnsPerMinute,
      cap: f.roomQueueCap,
    };
  }

  /** check-flood.lua: the flood limits alone, for an event checked before it is built. */
  checkFlood(a: { room: string } & FloodArgs): Promise<FloodReply> {
    const { counter, noticeQueue, noticeRate, perMinute, cap } = this.flood(a.room, a);
    return this.call(
      "checkFlood",
      { inbox: this.keys.inbox(a.room), counter, noticeQueue, noticeRate },
      { perMinute, cap },
      false,
    );
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
      { room: a.room, token: a.token, leaseMs: a.leaseMs, turnRecordMs: a.turnRecordMs },
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
    const lane = this.keys.laneShard(a.lane, a.shard);
    const reply = await this.call(
      "renewLeases",
      { running: lane.running },
      {
        leaseMs: a.leaseMs,
        leases: a.leases.map((l) => ({ room: l.room, token: l.token, lease: this.keys.lease(l.room) })),
      },
      false,
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

  private call<N extends keyof Scripts>(
    name: N,
    keys: KeysOf<Scripts[N]>,
    args: ArgsOf<Scripts[N]>,
    durable: boolean,
  ): Promise<z.infer<Scripts[N]["reply"]>> {
    const script = SCHEDULER_SCRIPTS[name] as unknown as LuaScript<
      string,
      unknown,
      z.infer<Scripts[N]["reply"]>
    >;
    return runScript(
      this.redis,
      script,
      keys as Record<string, string>,
      args,
      durable ? { durability: this.durability } : {},
    );
  }
}
