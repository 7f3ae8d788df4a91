import type { Inbox } from "../core/adapter.js";
import { AdmissionSchema, type Admission, type FloodTicket } from "../core/admission.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { eventsTotal } from "../ops/metrics.js";
import { laneOf as defaultLaneOf } from "./lanes.js";
import type { ClaimReply, EnqueueReply } from "./scheduler-replies.js";
import type { ClaimArgs, EnqueueArgs } from "./scheduler-args.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";

/** The lane a room's turns run in; every process must compute the same lane for a room. */
export type LaneOf = (room: string) => string;

/** A worker slot kept for a claim made in the call that queues a room's event. */
export interface ClaimTicket {
  claim: ClaimArgs;
  /** The claim took the room: the worker runs it under the ticket's lease. */
  taken(reply: Extract<ClaimReply, { kind: "claimed" }>): void;
  /** The claim took nothing (or the call failed): the slot is free again. */
  dropped(): void;
}

/** The worker of this process, as the inbox sees it. */
export interface LocalWorker {
  /**
   * Offers a room that just became pending; true when it took it (it serves the lane
   * and has a free slot), so no wake-up goes through Redis.
   */
  offer(lane: string, room: string): boolean;
  /** A slot for a claim of `room` made with the enqueue, when the lane is served here and a slot is free. */
  ticket(lane: string, room: string): ClaimTicket | undefined;
}

/**
 * The Inbox adapters (and any other producer: a scheduled fire, a webhook) write to:
 * in one script on the room's shard, an event is appended to its room's FIFO in
 * Redis (once per platform event id within the de-duplication window, and within
 * the sender's flood limits when given) and the room becomes pending in its lane
 * unless a worker holds it; when the worker of this process has a free slot for the
 * lane, the same call claims the room for it, else a room that became pending wakes
 * one idle worker of the lane through Redis, and an event queued behind a running turn
 * is signalled to it (room-signals.ts). The event is acknowledged (and
 * replicated, where replicas are waited for) when the call resolves.
 */
export class RedisInbox implements Inbox {
  constructor(
    private readonly scripts: SchedulerScripts,
    private readonly dedupeMs: number,
    private readonly laneOf: LaneOf = defaultLaneOf,
    private readonly local?: () => LocalWorker | undefined,
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
    const args: EnqueueArgs = {
      room: parsed.room,
      lane,
      eventId: parsed.eventId,
      entry: JSON.stringify(parsed),
      dedupeMs: this.dedupeMs,
      ...(ticket ? { flood: ticket } : {}),
    };
    const worker = this.local?.();
    const { reply, claimed } = await this.queue(args, worker?.ticket(lane, parsed.room));
    // A lost wake-up only delays the room until a worker next looks at its shard. A
    // duplicate wakes one too: it may be the retry of an attempt that was applied but not
    // acknowledged (a failover), which made the room pending and woke nobody.
    const wake = !claimed && (reply.kind === "duplicate" || (reply.kind === "queued" && reply.becamePending));
    if (wake && !worker?.offer(lane, parsed.room)) {
      void this.scripts.wake(lane, parsed.room).catch(() => undefined);
    }
    // Queued behind a turn that runs (or a room already pending): a call of that turn may
    // wait for this very event (a /cancel, an answer), and hears of it by this signal.
    if (!claimed && reply.kind === "queued" && !reply.becamePending) {
      void this.scripts.signal(parsed.room).catch(() => undefined);
    }
    const admission = AdmissionSchema.parse(
      reply.kind === "refused"
        ? { result: "refused", limit: reply.limit, noticeDue: reply.noticeDue }
        : { result: reply.kind },
    );
    eventsTotal.inc({ platform: parsed.platform, result: admission.result });
    return admission;
  }

  /** Queues the event, claiming its room in the same call when the worker kept a slot for it. */
  private async queue(
    args: EnqueueArgs,
    ticket: ClaimTicket | undefined,
  ): Promise<{ reply: EnqueueReply; claimed: boolean }> {
    if (!ticket) return { reply: await this.scripts.enqueue(args), claimed: false };
    let both: Awaited<ReturnType<SchedulerScripts["enqueueAndClaim"]>>;
    try {
      both = await this.scripts.enqueueAndClaim(args, ticket.claim);
    } catch (err) {
      // A claim applied but not acknowledged holds the room until its lease runs out; a
      // retried enqueue (a duplicate) wakes a worker, which takes it over then.
      ticket.dropped();
      throw err;
    }
    if (both.claimed.kind !== "claimed") {
      ticket.dropped();
      return { reply: both.queued, claimed: false };
    }
    ticket.taken(both.claimed);
    return { reply: both.queued, claimed: true };
  }
}
