import type { Redis } from "ioredis";
import { z } from "zod";
import { InboundEventSchema } from "../core/event.js";
import { TurnOutcomeSchema, type TurnOutcome } from "../core/reply.js";
import type { Keys } from "../sessions/keys.js";
import { safeJson } from "../sessions/session-store.js";
import { laneOf } from "./lanes.js";
import { QueueScripts } from "./scripts.js";

/** A dead letter as `park-turn.lua` records it. */
export const DeadLetterSchema = z.object({
  id: z.string(),
  room: z.string(),
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

/** Field of a re-queued inbox entry that carries its outcome, so it is delivered and not asked again. */
const REQUEUED_OUTCOME = "rgRequeuedOutcome";

/** The outcome a re-queued dead letter carries, if any. */
export function requeuedOutcomeOf(entry: unknown): TurnOutcome | null {
  if (entry === null || typeof entry !== "object" || !(REQUEUED_OUTCOME in entry)) return null;
  const parsed = TurnOutcomeSchema.safeParse((entry as Record<string, unknown>)[REQUEUED_OUTCOME]);
  return parsed.success ? parsed.data : null;
}

/** The dead-letter list: turns that could not be delivered by their deadline, for an operator to list and re-queue. */
export class DeadLetters {
  private readonly scripts: QueueScripts;

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {
    this.scripts = new QueueScripts(redis);
  }

  /** Every dead letter, oldest first; unreadable records are skipped. */
  async list(): Promise<DeadLetter[]> {
    const ids = await this.redis.zrange(this.keys.deadLetterIndex, 0, -1);
    if (ids.length === 0) return [];
    const raws = await this.redis.hmget(this.keys.deadLetters, ...ids);
    return raws.flatMap((raw) => {
      const parsed = DeadLetterSchema.safeParse(raw ? safeJson(raw) : undefined);
      return parsed.success ? [parsed.data] : [];
    });
  }

  /** Puts one dead letter back in its room's inbox; false when there is no such id. */
  async requeue(id: string): Promise<boolean> {
    const raw = await this.redis.hget(this.keys.deadLetters, id);
    const parsed = DeadLetterSchema.safeParse(raw ? safeJson(raw) : undefined);
    if (!parsed.success) return false;
    const letter = parsed.data;
    const event = safeJson(letter.event);
    const outcome = letter.outcome ? safeJson(letter.outcome) : undefined;
    const entry =
      outcome !== undefined && InboundEventSchema.safeParse(event).success
        ? JSON.stringify({ ...(event as object), [REQUEUED_OUTCOME]: outcome })
        : letter.event;
    const lane = laneOf(letter.room);
    const res = await this.scripts.run(
      "rgRequeue",
      this.keys.deadLetters,
      this.keys.deadLetterIndex,
      this.keys.inbox(letter.room),
      this.keys.pending(lane),
      this.keys.running(lane),
      this.keys.wake(lane),
      id,
      letter.room,
      entry,
    );
    return Number(res) === 1;
  }

  /** Re-queues every dead letter; returns how many. */
  async requeueAll(): Promise<number> {
    let n = 0;
    for (const letter of await this.list()) if (await this.requeue(letter.id)) n += 1;
    return n;
  }
}
