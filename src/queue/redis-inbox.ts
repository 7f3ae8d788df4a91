import type { Inbox } from "../core/adapter.js";
import { AdmissionSchema, type Admission, type FloodTicket } from "../core/admission.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { eventsTotal } from "../ops/metrics.js";
import { laneOf as defaultLaneOf } from "./lanes.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";

/** The lane a room's turns run in; every process must compute the same lane for a room. */
export type LaneOf = (room: string) => string;

/**
 * Offers a room that just became pending to a worker of this process; true when it
 * took it (it serves the lane and has a free slot), so no wake-up goes through Redis.
 */
export type LocalWake = (lane: string, room: string) => boolean;

/**
 * The Inbox adapters (and any other producer: a scheduled fire, a webhook) write to:
 * in one script on the room's shard, an event is appended to its room's FIFO in
 * Redis (once per platform event id within the de-duplication window, and within
 * the sender's flood limits when given) and the room becomes pending in its lane
 * unless a worker holds it; a room that became pending goes to a free worker of
 * this process, else wakes one idle worker of the lane through Redis. The event is acknowledged (and replicated, where replicas are waited
 * for) when the call resolves.
 */
export class RedisInbox implements Inbox {
  constructor(
    private readonly scripts: SchedulerScripts,
    private readonly dedupeMs: number,
    private readonly laneOf: LaneOf = defaultLaneOf,
    private readonly localWake: LocalWake = () => false,
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
    const lane = this.laneOf(parsed.room);
    const reply = await this.scripts.enqueue({
      room: parsed.room,
      lane,
      eventId: parsed.eventId,
      entry: JSON.stringify(parsed),
      dedupeMs: this.dedupeMs,
      ...(ticket ? { flood: ticket } : {}),
    });
    // A lost wake-up only delays the room until a worker next looks at its shard. A
    // duplicate wakes one too: it may be the retry of an attempt that was applied but not
    // acknowledged (a failover), which made the room pending and woke nobody.
    const wake = reply.kind === "duplicate" || (reply.kind === "queued" && reply.becamePending);
    if (wake && !this.localWake(lane, parsed.room)) {
      void this.scripts.wake(lane, parsed.room).catch(() => undefined);
    }
    const admission = AdmissionSchema.parse(
      reply.kind === "refused"
        ? { result: "refused", limit: reply.limit, noticeDue: reply.noticeDue }
        : { result: reply.kind },
    );
    eventsTotal.inc({ platform: parsed.platform, result: admission.result });
    return admission;
  }
}
