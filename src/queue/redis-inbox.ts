import type { Inbox } from "../core/adapter.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { eventsTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { KickQueues } from "./kick-queues.js";
import type { QueueScripts } from "./scripts.js";

/** How long a platform event id is remembered for de-duplication. */
const DEDUPE_SECONDS = 7 * 24 * 3600;

/**
 * The Inbox adapters write to: an event is appended to its room's FIFO in Redis
 * (once per platform event id) and a worker of the room's lane is kicked.
 */
export class RedisInbox implements Inbox {
  constructor(
    private readonly keys: Keys,
    private readonly scripts: QueueScripts,
    private readonly kicks: KickQueues,
  ) {}

  /** Queues the event; false when this platform event id was already queued. */
  async enqueue(event: InboundEvent): Promise<boolean> {
    const parsed = InboundEventSchema.parse(event);
    const added = await this.scripts.enqueueEvent(
      this.keys.dedupe(parsed.room, parsed.eventId),
      this.keys.inbox(parsed.room),
      JSON.stringify(parsed),
      DEDUPE_SECONDS,
    );
    if (added === 0) {
      eventsTotal.inc({ platform: parsed.platform, result: "duplicate" });
      return false;
    }
    await this.kicks.kick(parsed.room);
    eventsTotal.inc({ platform: parsed.platform, result: "queued" });
    return true;
  }
}
