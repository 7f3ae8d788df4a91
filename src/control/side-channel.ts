import type { Redis } from "ioredis";
import type { Inbox } from "../core/adapter.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import type { Keys } from "../sessions/keys.js";

/** How many recent events a room's side stream keeps, and for how long. */
const SIDE_MAXLEN = 200;
const SIDE_SECONDS = 3600;
/** How long a consumed mark is kept: longer than any turn waits in the room's queue. */
const CONSUMED_SECONDS = 24 * 3600;

/**
 * The out-of-band path into a running turn. A room's turns run one at a time, so an
 * answer to a question the running turn asked (an elicitation, a /cancel) would
 * queue behind it forever. The inbox is tapped: every new event from an allowed user
 * is also appended to the room's side stream, which the running turn reads; an event
 * it takes is marked consumed, so its own turn, when it comes, does nothing.
 */
export class SideChannel {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** The inbox adapters write to, with every newly queued event also on the room's side stream. */
  tap(inbox: Inbox): Inbox {
    return {
      enqueue: async (event) => {
        const added = await inbox.enqueue(event);
        if (added && event.sender.allowed && event.kind !== "file") {
          const key = this.keys.side(event.room);
          await this.redis
            .multi()
            .xadd(key, "MAXLEN", "~", String(SIDE_MAXLEN), "*", "event", JSON.stringify(event))
            .expire(key, SIDE_SECONDS)
            .exec();
        }
        return added;
      },
    };
  }

  /** Events of the room after the stream id `sinceId`, oldest first, with their stream ids. */
  async read(room: string, sinceId: string): Promise<{ id: string; event: InboundEvent }[]> {
    const entries = await this.redis.xrange(this.keys.side(room), `(${sinceId}`, "+");
    const out: { id: string; event: InboundEvent }[] = [];
    for (const [id, fields] of entries) {
      const at = fields.indexOf("event");
      const parsed = at >= 0 ? InboundEventSchema.safeParse(JSON.parse(fields[at + 1] ?? "null")) : undefined;
      if (parsed?.success) out.push({ id, event: parsed.data });
    }
    return out;
  }

  /**
   * The stream id to read after: the entry of `eventId` when given and present (a
   * turn's own event), else the newest entry now (what arrives from here on).
   */
  async position(room: string, eventId?: string): Promise<string> {
    const entries = await this.redis.xrevrange(this.keys.side(room), "+", "-", "COUNT", SIDE_MAXLEN);
    if (eventId !== undefined) {
      for (const [id, fields] of entries) {
        const at = fields.indexOf("event");
        if (at >= 0 && (fields[at + 1] ?? "").includes(`"eventId":${JSON.stringify(eventId)}`)) return id;
      }
    }
    return entries[0]?.[0] ?? "0-0";
  }

  /** Marks an event as taken by a running turn. */
  async consume(room: string, eventId: string): Promise<void> {
    await this.redis.set(this.keys.consumed(room, eventId), "1", "EX", CONSUMED_SECONDS);
  }

  /** True when a running turn already took this event. */
  async wasConsumed(room: string, eventId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.consumed(room, eventId))) === 1;
  }
}
