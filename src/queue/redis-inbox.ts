import { z } from "zod";
import type { Inbox } from "../core/adapter.js";
import { AdmissionSchema, FloodLimitSchema, type Admission, type FloodTicket } from "../core/admission.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { eventsTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import { laneOf } from "./lanes.js";
import type { QueueScripts } from "./scripts.js";

/** The enqueue script's reply (src/queue/lua/enqueue-event.lua). */
const EnqueueReplySchema = z
  .union([
    z.tuple([z.literal("queued")]),
    z.tuple([z.literal("duplicate")]),
    z.tuple([z.literal("refused"), FloodLimitSchema, z.union([z.literal(0), z.literal(1)])]),
  ])
  .transform((reply) =>
    AdmissionSchema.parse(
      reply[0] === "refused"
        ? { result: reply[0], limit: reply[1], noticeDue: reply[2] === 1 }
        : { result: reply[0] },
    ),
  );

/**
 * The Inbox adapters write to: in one script, an event is appended to its room's
 * FIFO in Redis (once per platform event id within the de-duplication window, and
 * within the sender's flood limits when given) and the room becomes claimable by a
 * worker of its lane unless one holds it already.
 */
export class RedisInbox implements Inbox {
  constructor(
    private readonly keys: Keys,
    private readonly scripts: QueueScripts,
    private readonly dedupeMs: number,
  ) {}

  /** Queues the event; false when this platform event id was already queued. */
  async enqueue(event: InboundEvent): Promise<boolean> {
    return (await this.run(event)).result === "queued";
  }

  /** Queues the event unless the sender's flood limits refuse it, in the same round trip. */
  enqueueLimited(event: InboundEvent, ticket: FloodTicket): Promise<Admission> {
    return this.run(event, ticket);
  }

  private async run(event: InboundEvent, ticket?: FloodTicket): Promise<Admission> {
    const parsed = InboundEventSchema.parse(event);
    const lane = laneOf(parsed.room);
    const keys = [
      this.keys.seen(parsed.room),
      this.keys.inbox(parsed.room),
      this.keys.pending(lane),
      this.keys.running(lane),
      this.keys.wake(lane),
    ];
    const args: (string | number)[] = [parsed.eventId, JSON.stringify(parsed), this.dedupeMs, parsed.room];
    if (ticket) {
      keys.push(
        this.keys.turnRate(ticket.userId),
        this.keys.notice(parsed.room, "queue", ticket.userId),
        this.keys.notice(parsed.room, "rate", ticket.userId),
      );
      args.push(ticket.turnsPerMinute, ticket.roomQueueCap);
    }
    const admission = EnqueueReplySchema.parse(
      await this.scripts.run("rgEnqueue", keys.length, ...keys, ...args),
    );
    eventsTotal.inc({ platform: parsed.platform, result: admission.result });
    return admission;
  }
}
