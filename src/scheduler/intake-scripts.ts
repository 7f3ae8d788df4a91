import { NO_WAIT, type Durability } from "./durable-write.js";
import type { SchedulerKeys } from "./scheduler-keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { ClaimArgs, EnqueueArgs, FloodArgs } from "./scheduler-args.js";
import type { ClaimReply, EnqueueEventsReply, EnqueueReply, FloodReply } from "./scheduler-replies.js";
import {
  callScript,
  type ArgsOf,
  type KeysOf,
  type ReplyOf,
  type ScriptName,
} from "./scheduler-declarations.js";

/** One event of an enqueue batch, with the claim of its room when the caller has a slot for it. */
export interface BatchEvent extends Omit<EnqueueArgs, "lane" | "dedupeMs"> {
  claim?: ClaimArgs;
}

/**
 * The scripts that put events in rooms' inboxes, as typed calls (the scheduler's way
 * in; the turn's calls are SchedulerScripts'): the keys and argument table of each
 * built from named values, the enqueue waiting for the replicas `durability` names.
 */
export class IntakeScripts {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SchedulerKeys,
    private readonly durability: Durability = NO_WAIT,
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

  private call<N extends ScriptName>(
    name: N,
    keys: KeysOf<N>,
    args: ArgsOf<N>,
    durable: boolean,
  ): Promise<ReplyOf<N>> {
    return callScript(this.redis, name, keys, args, durable ? this.durability : undefined);
  }
}
