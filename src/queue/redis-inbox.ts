import type { Inbox } from "../core/adapter.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { eventsTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import { laneOf } from "./lanes.js";
import type { QueueScripts } from "./scripts.js";

/**
 * The Inbox adapters write to: in one script, an event is appended to its room's
 * FIFO in Redis (once per platform event id within the de-duplication window) and
 * the room becomes claimable by a worker of its lane unless one holds it already.
 */
export class RedisInbox implements Inbox {
  constructor(
    private readonly keys: Keys,
    private readonly scripts: QueueScripts,
    private readonly dedupeMs: number,
  ) {}

  /** Queues the event; false when this platform event id was already queued. */
  async enqueue(event: InboundEvent): Promise<boolean> {
    const parsed = InboundEventSchema.parse(event);
    const lane = laneOf(parsed.room);
    const added = Number(
      await this.scripts.run(
        "rgEnqueue",
        this.keys.seen(parsed.room),
        this.keys.inbox(parsed.room),
        this.keys.pending(lane),
        this.keys.running(lane),
        this.keys.wake(lane),
        parsed.eventId,
        JSON.stringify(parsed),
        this.dedupeMs,
        parsed.room,
      ),
    );
    eventsTotal.inc({ platform: parsed.platform, result: added === 0 ? "duplicate" : "queued" });
    return added !== 0;
  }
}
