import type { Inbox } from "../core/adapter.js";
import { AdmissionSchema, type Admission, type FloodTicket } from "../core/admission.js";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import { eventsTotal } from "../ops/metrics.js";
import { laneOf as defaultLaneOf } from "./lanes.js";
import type { ClaimReply, EnqueueReply } from "./scheduler-replies.js";
import type { ClaimArgs } from "./scheduler-args.js";
import type { BatchEvent, IntakeScripts } from "./intake-scripts.js";
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

/** One event waiting for its batch's call. */
interface Queued {
  event: InboundEvent;
  lane: string;
  args: BatchEvent;
  ticket?: ClaimTicket | undefined;
  done: (admission: Admission) => void;
  failed: (err: unknown) => void;
}

/** Events this process queued lately that no turn took yet, by entry; beyond this many, none is kept. */
const RECENT_MAX = 10_000;
/** A kept event older than this (another process took its turn) makes room for a new one. */
const RECENT_MS = 60_000;

/**
 * The Inbox adapters (and any other producer: a scheduled fire, a webhook) write to.
 * Events queued in the same turn of the event loop (a poller's batch, concurrent
 * webhooks) go to Redis together: one script call per lane and shard, in the order
 * they were queued (src/scheduler/lua/enqueue-events.lua). Each event is appended to its
 * room's FIFO (once per platform event id within the de-duplication window, and within
 * the sender's flood limits when given) and the room becomes pending in its lane
 * unless a worker holds it (whose running turn is signalled). When the worker of this
 * process has a free slot for the lane, the same call claims the room for it; else a
 * room that became pending wakes one idle worker of the lane through Redis (one RPUSH
 * per batch). An event is acknowledged (and replicated, where replicas are waited
 * for) when its call resolves.
 */
export class RedisInbox implements Inbox {
  private readonly batches = new Map<string, Queued[]>();
  private scheduled = false;
  private readonly recent = new Map<string, { event: InboundEvent; at: number }>();

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

  /** How many events wait in the room's inbox (its running turn's included). */
  queued(room: string): Promise<number> {
    return this.scripts.inboxLength(room);
  }

  /**
   * The event this process queued as `entry`, if it still has it: a turn of it takes
   * the event as it was built instead of parsing the entry again.
   */
  takeRecent(entry: string): InboundEvent | undefined {
    const kept = this.recent.get(entry);
    if (kept) this.recent.delete(entry);
    return kept?.event;
  }

  private run(event: InboundEvent, flood?: FloodTicket): Promise<Admission> {
    const parsed = InboundEventSchema.parse(event);
    const lane = this.laneOf(parsed.room);
    const shard = this.scripts.keys.shardOf(parsed.room);
    const key = `${lane}\u0000${shard}`;
    let batch = this.batches.get(key);
    if (!batch) {
      batch = [];
      this.batches.set(key, batch);
    }
    // One claim per room and call: its holder takes the room's later events in turn.
    const claimed = batch.some((q) => q.ticket && q.args.room === parsed.room);
    const ticket = claimed ? undefined : this.local?.()?.ticket(lane, parsed.room);
    const args: BatchEvent = {
      room: parsed.room,
      eventId: parsed.eventId,
      entry: JSON.stringify(parsed),
      ...(flood ? { flood } : {}),
      ...(ticket ? { claim: ticket.claim } : {}),
    };
    const queued = new Promise<Admission>((done, failed) =>
      batch.push({ event: parsed, lane, args, ticket, done, failed }),
    );
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return queued;
  }

  /** Sends every batch gathered since the last flush. */
  private flush(): void {
    this.scheduled = false;
    const batches = [...this.batches.values()];
    this.batches.clear();
    for (const batch of batches) void this.send(batch);
  }

  private async send(batch: Queued[]): Promise<void> {
    const { lane, args: first } = batch[0]!;
    let replies: Awaited<ReturnType<IntakeScripts["enqueueEvents"]>>;
    try {
      replies = await this.scripts.intake.enqueueEvents(
        lane,
        this.scripts.keys.shardOf(first.room),
        this.dedupeMs,
        batch.map((q) => q.args),
      );
    } catch (err) {
      // A claim applied but not acknowledged holds the room until its lease runs out; a
      // retried enqueue (a duplicate) wakes a worker, which takes it over then.
      for (const q of batch) {
        q.ticket?.dropped();
        q.failed(err);
      }
      return;
    }
    const taken = new Set<string>();
    replies.claims.forEach(({ room, reply }) => {
      const ticket = batch.find((q) => q.ticket && q.args.room === room)!.ticket!;
      if (reply.kind === "claimed") {
        taken.add(room);
        ticket.taken(reply);
      } else {
        ticket.dropped();
      }
    });
    const wake = new Set<string>();
    const worker = this.local?.();
    batch.forEach((q, i) => {
      const reply = replies.events[i]!;
      // A lost wake-up only delays the room until a worker next looks at its shard. A
      // duplicate wakes one too: it may be the retry of an attempt that was applied but
      // not acknowledged (a failover), which made the room pending and woke nobody.
      const room = q.args.room;
      const wakes = reply.kind === "duplicate" || (reply.kind === "queued" && reply.becamePending);
      if (wakes && !taken.has(room) && !wake.has(room) && !worker?.offer(lane, room)) wake.add(room);
      if (reply.kind === "queued") this.remember(q.args.entry, q.event);
      q.done(this.admission(q.event, reply));
    });
    if (wake.size > 0) void this.scripts.wake(lane, ...wake).catch(() => undefined);
  }

  private admission(event: InboundEvent, reply: EnqueueReply): Admission {
    const admission = AdmissionSchema.parse(
      reply.kind === "refused"
        ? { result: "refused", limit: reply.limit, noticeDue: reply.noticeDue }
        : { result: reply.kind },
    );
    eventsTotal.inc({ platform: event.platform, result: admission.result });
    return admission;
  }

  private remember(entry: string, event: InboundEvent): void {
    const now = Date.now();
    if (this.recent.size >= RECENT_MAX) {
      for (const [old, kept] of this.recent) {
        if (now - kept.at < RECENT_MS) break;
        this.recent.delete(old);
      }
      if (this.recent.size >= RECENT_MAX) return;
    }
    this.recent.set(entry, { event, at: now });
  }
}
