import { NO_WAIT, type Durability } from "./durable-write.js";
import type { SchedulerKeys } from "./scheduler-keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { ClaimArgs, EnqueueArgs, FloodArgs } from "./scheduler-args.js";
import type { ClaimReply, EnqueueEventsReply, EnqueueReply, FloodReply } from "./scheduler-replies.js";
import type { MoreKeys } from "./lua-script.js";
import {
  callScript,
  moreKeysOf,
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
    const named = { pending: laneKeys.pending, running: laneKeys.running, seen: keys.seen(shard) };
    const more = moreKeysOf("enqueueEvents", named);
    const reply: EnqueueEventsReply = await this.call(
      "enqueueEvents",
      named,
      {
        dedupeMs,
        events: events.map((e) => ({
          room: e.room,
          id: e.eventId,
          entry: e.entry,
          inboxKey: more.of(keys.inbox(e.room)),
          signal: keys.roomSignal(e.room),
          ...(e.flood ? { flood: this.flood(e.room, e.flood, more) } : {}),
        })),
        ...(claims.length > 0
          ? {
              claims: claims.map((e) => ({
                room: e.room,
                ...e.claim!,
                leaseKey: more.of(keys.lease(e.room)),
                inboxKey: more.of(keys.inbox(e.room)),
                sessionKey: more.of(keys.session(e.room)),
                turnKey: more.of(keys.turn(e.room)),
              })),
            }
          : {}),
      },
      true,
      more,
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

  /** An event's flood check in enqueue-events.lua: its keys by their index in KEYS. */
  private flood(room: string, f: FloodArgs, more: MoreKeys) {
    const k = this.floodKeys(room, f.userId);
    return {
      counterKey: more.of(k.counter),
      noticeQueueKey: more.of(k.noticeQueue),
      noticeRateKey: more.of(k.noticeRate),
      perMinute: f.turnsPerMinute,
      cap: f.roomQueueCap,
    };
  }

  private floodKeys(room: string, userId: string) {
    return {
      counter: this.keys.turnRate(room, userId),
      noticeQueue: this.keys.notice(room, "queue", userId),
      noticeRate: this.keys.notice(room, "rate", userId),
    };
  }

  /** check-flood.lua: the flood limits alone, for an event checked before it is built. */
  checkFlood(a: { room: string } & FloodArgs): Promise<FloodReply> {
    return this.call(
      "checkFlood",
      { inbox: this.keys.inbox(a.room), ...this.floodKeys(a.room, a.userId) },
      { perMinute: a.turnsPerMinute, cap: a.roomQueueCap },
      false,
    );
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
