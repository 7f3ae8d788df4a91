import { z } from "zod";
import { InboundEventSchema } from "../core/event.js";
import { TurnOutcomeSchema, type TurnOutcome } from "../core/reply.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { safeJson } from "../core/safe-json.js";
import { laneOf } from "./lanes.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";

/** A dead letter as `park-turn.lua` records it. */
export const DeadLetterSchema = z.object({
  id: z.string(),
  room: z.string(),
  /** The lane the turn ran in (records from before lanes were kept: the room's default lane). */
  lane: z.string().optional(),
  /** The inbox entry (event JSON) as it was queued. */
  event: z.string(),
  /** The turn's committed outcome JSON, "" when it was never computed. */
  outcome: z.string(),
  reason: z.string(),
  at: z.number(),
  waitedMs: z.number(),
  attempts: z.number(),
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

/** The reason of a dead letter that was set aside (it kept killing its process or namespace). */
export const QUARANTINED = "quarantined: ";

/**
 * What an inbox entry carries besides its event (the event's own fields sit beside it):
 * a re-queued dead letter's outcome, so that it is delivered and not asked again.
 */
export const InboxEntryExtrasSchema = z.object({ requeuedOutcome: TurnOutcomeSchema.optional() });

/** The outcome a re-queued dead letter carries, if any (none, too, when it is unreadable: asked again). */
export function requeuedOutcomeOf(entry: unknown): TurnOutcome | null {
  return InboxEntryExtrasSchema.safeParse(entry).data?.requeuedOutcome ?? null;
}

/**
 * The dead letters of every shard: turns that could not be delivered (by their
 * deadline, a refusal no retry fixes, or a computation that kept killing its
 * process), for an operator to list and re-queue.
 */
export class DeadLetters {
  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: SchedulerScripts,
  ) {}

  /** Every dead letter of every shard, oldest first; unreadable records are skipped. */
  async list(): Promise<DeadLetter[]> {
    const keys = this.scripts.keys;
    const all: DeadLetter[] = [];
    for (let shard = 0; shard < keys.shards; shard += 1) {
      const ids = await this.redis.zrange(keys.deadLetterIndex(shard), 0, -1);
      if (ids.length === 0) continue;
      const raws = await this.redis.hmget(keys.deadLetters(shard), ...ids);
      for (const raw of raws) {
        const parsed = DeadLetterSchema.safeParse(raw ? safeJson(raw) : undefined);
        if (parsed.success) all.push(parsed.data);
      }
    }
    return all.sort((a, b) => a.at - b.at);
  }

  /** Puts one dead letter back in its room's inbox; false when there is no such id. */
  async requeue(id: string): Promise<boolean> {
    const letter = await this.find(id);
    if (!letter) return false;
    const event = safeJson(letter.event);
    // A set-aside turn's kept outcome is the line its sender already got: re-queued, it is asked again.
    const keep = letter.outcome !== "" && !letter.reason.startsWith(QUARANTINED);
    const outcome = keep ? TurnOutcomeSchema.safeParse(safeJson(letter.outcome)).data : undefined;
    const extras: z.infer<typeof InboxEntryExtrasSchema> | undefined = outcome && {
      requeuedOutcome: outcome,
    };
    const entry =
      extras && InboundEventSchema.safeParse(event).success
        ? JSON.stringify({ ...(event as object), ...extras })
        : letter.event;
    const lane = letter.lane ?? laneOf(letter.room);
    const reply = await this.scripts.requeue({ id, room: letter.room, lane, entry });
    if (reply.kind === "missing") return false;
    if (reply.becamePending) await this.scripts.wake(lane, letter.room);
    return true;
  }

  /** Re-queues every dead letter; returns how many. */
  async requeueAll(): Promise<number> {
    let n = 0;
    for (const letter of await this.list()) if (await this.requeue(letter.id)) n += 1;
    return n;
  }

  private async find(id: string): Promise<DeadLetter | undefined> {
    const keys = this.scripts.keys;
    for (let shard = 0; shard < keys.shards; shard += 1) {
      const raw = await this.redis.hget(keys.deadLetters(shard), id);
      if (!raw) continue;
      const parsed = DeadLetterSchema.safeParse(safeJson(raw));
      return parsed.success ? parsed.data : undefined;
    }
    return undefined;
  }
}
