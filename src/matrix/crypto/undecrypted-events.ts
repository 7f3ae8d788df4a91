import type { RedisClient } from "../../sessions/redis-connection.js";
import { z } from "zod";
import type { Logger } from "../../core/log.js";

/** How long an event waits for its room key; after that it is dropped with a log line. */
export const UNDECRYPTED_KEEP_MS = 24 * 3600_000;
/** At most this many events wait at once, so a flood of undecryptable events cannot grow Redis. */
export const UNDECRYPTED_MAX = 1000;

const ParkedSchema = z.object({
  roomId: z.string(),
  sessionId: z.string().optional(),
  event: z.looseObject({ event_id: z.string() }),
  /** Whether the event was history (before the bot was there) when it arrived. */
  history: z.boolean(),
  parkedAt: z.number(),
});
export type ParkedEvent = z.infer<typeof ParkedSchema>;

/**
 * Encrypted events that arrived before their room key, kept in Redis (one hash per
 * device, event id → event) so that whichever process owns the device when the key
 * comes decrypts and answers them: the person gets the answer late, not never.
 */
export class UndecryptedEvents {
  constructor(
    private readonly redis: RedisClient,
    /** `keys.matrixDevice(userId, deviceId, "undecrypted")`. */
    private readonly key: string,
    private readonly log: Logger,
  ) {}

  /** Keeps the event until its key comes; false when too many already wait. */
  async park(parked: Omit<ParkedEvent, "parkedAt">): Promise<boolean> {
    if ((await this.redis.hlen(this.key)) >= UNDECRYPTED_MAX) return false;
    const record: ParkedEvent = { ...parked, parkedAt: Date.now() };
    await this.redis.hset(this.key, parked.event.event_id, JSON.stringify(record));
    return true;
  }

  /**
   * The waiting events, oldest first, of the given room sessions (all when not given);
   * events past their keep time are removed and logged.
   */
  async waiting(sessions?: ReadonlySet<string>): Promise<ParkedEvent[]> {
    const all = await this.redis.hgetall(this.key);
    const out: ParkedEvent[] = [];
    const expired: string[] = [];
    for (const [eventId, raw] of Object.entries(all)) {
      const parsed = ParkedSchema.safeParse(JSON.parse(raw));
      if (!parsed.success || Date.now() - parsed.data.parkedAt > UNDECRYPTED_KEEP_MS) {
        expired.push(eventId);
        continue;
      }
      const session = `${parsed.data.roomId}|${parsed.data.sessionId ?? ""}`;
      if (!sessions || sessions.has(session)) out.push(parsed.data);
    }
    if (expired.length > 0) {
      this.log.warn({ events: expired }, "matrix: encrypted events never got their room key; dropped");
      await this.redis.hdel(this.key, ...expired);
    }
    return out.sort((a, b) => a.parkedAt - b.parkedAt);
  }

  /** Forgets an event (decrypted, or undecryptable for good). */
  async done(eventId: string): Promise<void> {
    await this.redis.hdel(this.key, eventId);
  }
}
