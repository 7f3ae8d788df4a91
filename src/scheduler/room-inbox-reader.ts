import { z } from "zod";
import type { RedisClient } from "../sessions/redis-connection.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { schedulerKeysOf, type KeyLayout, type SchedulerKeys } from "./scheduler-keys.js";
import { safeJson } from "../core/safe-json.js";

/** What telling queued events apart needs: the id each one carries. */
const QueuedIdSchema = z.object({ eventId: z.string() });

/**
 * Reads a room's queued events while one of its turns runs. A room's turns run one
 * at a time, so the answer to a question the running call asked (or a /cancel) is
 * queued behind that very turn; the running call reads the inbox for it (when a
 * signal says something came: room-watch.ts) instead of waiting. Positions are list indexes: the running turn's own event stays at the
 * head until it finishes, so the indexes of the events behind it do not move.
 */
export class RoomInboxReader {
  private readonly keys: SchedulerKeys;

  constructor(
    private readonly redis: RedisClient,
    layout: KeyLayout,
  ) {
    this.keys = schedulerKeysOf(layout);
  }

  /** The index after the turn's own event (when given and queued), else after the last event now. */
  async position(room: string, ownEventId?: string): Promise<number> {
    const raw = await this.redis.lrange(this.keys.inbox(room), 0, -1);
    if (ownEventId !== undefined) {
      const own = raw.findIndex((r) => QueuedIdSchema.safeParse(safeJson(r)).data?.eventId === ownEventId);
      if (own >= 0) return own + 1;
    }
    return raw.length;
  }

  /** Events queued at or after `from`, oldest first, each with the position after it. */
  async after(room: string, from: number): Promise<{ next: number; event: InboundEvent }[]> {
    const raw = await this.redis.lrange(this.keys.inbox(room), from, -1);
    const out: { next: number; event: InboundEvent }[] = [];
    for (const [i, text] of raw.entries()) {
      const parsed = InboundEventSchema.safeParse(safeJson(text));
      if (parsed.success) out.push({ next: from + i + 1, event: parsed.data });
    }
    return out;
  }
}
