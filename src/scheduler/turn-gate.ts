import { randomUUID } from "node:crypto";
import type { DeliveryLedger, SendGate, SendWindow } from "../core/adapter.js";
import { LeaseLostError, SendDeferredError } from "../core/delivery-errors.js";
import type { Logger } from "../core/log.js";
import { sleep } from "../core/retry.js";
import type { RedisRateLimiter } from "./rate-limiter.js";
import { resentUnknownPartsTotal } from "../ops/metrics.js";
import type { RoomLease } from "./room-lease.js";
import type { CommitRecord, TurnWrites } from "./scheduler-args.js";
import type { TurnLifecycle } from "./turn-lifecycle.js";

/**
 * Waits shorter than this are waited out in the step; longer ones are booked, and the
 * turn waits for the booking outside the worker's slots or parks (src/scheduler/slot-wait.ts),
 * so that a wait holds a worker slot only when many rooms already wait (DESIGN §8).
 */
const PARK_AFTER_MS = 20;

/**
 * A room parked for a booked slot is due this much before the slot, so that its claim
 * and step are done by then and the worker sleeps out the rest: the send leaves on
 * time instead of a claim's latency late. Below PARK_AFTER_MS, so one booking suffices.
 */
const BOOKED_LEAD_MS = 10;

/**
 * A booked slot that comes later than planned (its neighbours' requests left or were
 * answered late, on a loaded machine) is waited for in the worker up to this long:
 * parking again would cost a park, a claim and another booking for a wait this short.
 */
const BOOKED_WAIT_MS = 100;

/**
 * A slot whose time went by this long before its step was done (the room's master
 * failing over, a stalled worker) is asked for again: the others planned on this send
 * leaving at its slot, and a request leaving seconds late would land among theirs.
 */
const LATE_MS = 50;

/**
 * One turn's ledger and send gate: what was sent is read from the turn record the
 * claim returned, and every write (the turn's commit, parts sent) is buffered and
 * carried by the lease's next fenced call — the step before the next send, or the
 * turn's finish — so that a turn costs few round trips and nothing is written by a
 * worker that lost the room. The send slot is taken in the bot's own slot right
 * after the step, as the last thing before the request leaves.
 */
export class TurnGate implements DeliveryLedger, SendGate {
  private commit: CommitRecord | undefined;
  private sent: Record<string, string> = {};
  private warned = new Set<string>();
  /** The slot of a part whose request has not left (booked for later, or its answer lost), kept by the park. */
  private booked: { part: string; member: string } | undefined;
  /** Parts whose attempt the platform refused, with the mark to put back ("" for none). */
  private notSent: Record<string, string> = {};
  /** The part of the last reservation, which `refused` speaks of. */
  private reserved: string | undefined;
  /** The slot taken by the last reservation, while its answer time is worth recording. */
  private inFlight: { windows: SendWindow[]; member: string } | undefined;

  constructor(
    private readonly deps: {
      limiter: RedisRateLimiter;
      /** The turn's logger (its turn id and room bound). */
      log: Logger;
      platform: string;
    },
    private readonly lease: RoomLease,
    private readonly record: Record<string, string>,
    /** The turn's state: stepped once its step is written, sending while a part's request is out. */
    private readonly turn: TurnLifecycle,
  ) {}

  /** Buffers the turn's commit; it is written before the first send, or with the finish. */
  setCommit(commit: CommitRecord): void {
    this.commit = commit;
  }

  /** The buffered writes, as the next fenced call carries them. */
  writes(): TurnWrites {
    return {
      ...(this.commit ? { commit: this.commit } : {}),
      ...(Object.keys(this.sent).length > 0 ? { sent: this.sent } : {}),
      ...(Object.keys(this.notSent).length > 0 ? { notSent: this.notSent } : {}),
    };
  }

  /** The buffered commit, if no step carried it yet. */
  pendingCommit(): CommitRecord | undefined {
    return this.commit;
  }

  /** The slot booked for a part that waits for it (the part and the slot's member), if any. */
  bookedSlot(): { part: string; member: string } | undefined {
    return this.booked;
  }

  async get(partKey: string): Promise<string | null> {
    const done = this.sent[partKey] ?? this.record[`part:${partKey}`];
    if (done !== undefined) return done;
    const mark = this.record[`sending:${partKey}`];
    if (mark !== undefined && !this.warned.has(partKey)) {
      // Telegram has no idempotency key: an attempt whose answer was never recorded (a timeout,
      // a 5xx, a worker that died; a refusal puts the mark back: `refused`) is sent again, which
      // duplicates it only if it had arrived; the sender tells the person (`unconfirmed`).
      // The mark names when and by which worker that attempt was made, so that an operator (or
      // the fault script) can tell this window from an unexplained duplicate.
      this.warned.add(partKey);
      resentUnknownPartsTotal.inc({ platform: this.deps.platform });
      this.deps.log.info(
        { part: partKey, ...attemptOf(mark) },
        "an earlier attempt of this part has no recorded answer; sending it again",
      );
    }
    return null;
  }

  async set(partKey: string, messageRef: string): Promise<void> {
    this.sent[partKey] = messageRef;
    delete this.notSent[partKey];
  }

  unconfirmed(partKey: string): boolean {
    const done = this.sent[partKey] ?? this.record[`part:${partKey}`];
    return done === undefined && this.record[`sending:${partKey}`] !== undefined;
  }

  refused(): void {
    const part = this.reserved;
    if (part === undefined) return;
    // The mark goes back to what the claim found: an earlier holder's attempt whose answer
    // is unknown stays unknown (it may have arrived), and a part with none is unmarked.
    this.notSent[part] = this.record[`sending:${part}`] ?? "";
  }

  async reserve(windows: SendWindow[], partKey?: string): Promise<void> {
    const part = partKey ?? "";
    // A slot booked for this part by an earlier holder is asked for by its member.
    const key = `booked:${part}`;
    // Or by this gate itself, when the turn waited for the slot in place.
    const earlier = this.record[key] ?? (this.booked?.part === part ? this.booked.member : undefined);
    const member = earlier ?? randomUUID();
    const soon = earlier === undefined ? PARK_AFTER_MS : BOOKED_WAIT_MS;
    // Kept until the request leaves, whatever ends the attempt before: a booking whose
    // answer was lost (a connection reset, a write not acknowledged) stands in every
    // window, and the next attempt must ask for it by its member, not book beside it.
    // Its request never left, so moving its entry undercounts nothing.
    this.booked = { part, member };
    const { limiter } = this.deps;
    // When this process expects the slot now (limits far off, as a self-hosted Bot API
    // has them), the step goes out beside the booking: one round trip before the send
    // instead of two. A booking that comes back for later is then waited for here,
    // since the part is already marked; a guess that is wrong costs a held slot, never
    // a limit.
    if (earlier === undefined && limiter.expectsSlotNow(windows)) {
      const booking = limiter
        .book(windows, member, soon)
        .then((r) => ({ ...r, dueAt: Date.now() - r.lateMs + r.waitMs }));
      // Both settle before either failure is thrown, so a park never races the step's writes.
      const [slot, step] = await Promise.allSettled([booking, this.stepped(part)]);
      if (step.status === "rejected") throw step.reason;
      await this.unsentIfThrows(async () => {
        if (slot.status === "rejected") throw slot.reason;
        const { waitMs, tight, dueAt } = slot.value;
        const late = Date.now() - dueAt;
        const taken = waitMs > soon || late > LATE_MS ? await this.retake(windows, member) : tight;
        if (late < 0 && waitMs <= soon) await sleep(-late);
        if (this.lease.lost) throw new LeaseLostError(this.lease.room);
        this.inFlight = taken ? { windows, member } : undefined;
      });
      this.booked = undefined;
      this.turn.to("sending");
      return;
    }
    const { waitMs, tight, lateMs } = await limiter.book(windows, member, soon, {
      booked: earlier !== undefined,
    });
    if (waitMs > soon) {
      // Booked for later: nothing is stepped, the park carries the writes and keeps the booking.
      throw new SendDeferredError(Math.max(1, waitMs - BOOKED_LEAD_MS), "send window full; slot booked");
    }
    // The slot is ours (within `soon`, never asked for again: the script counts on that):
    // the fenced step commits and marks the part while the rest of the wait passes.
    // The slot was taken when the script ran: an answer held up came after it by `lateMs`.
    const dueAt = Date.now() - lateMs + waitMs;
    await this.stepped(part);
    delete this.record[key];
    await this.unsentIfThrows(async () => {
      const late = Date.now() - dueAt;
      const taken = late > LATE_MS ? await this.retake(windows, member) : tight;
      if (late < 0) await sleep(-late);
      if (this.lease.lost) throw new LeaseLostError(this.lease.room);
      this.inFlight = taken ? { windows, member } : undefined;
    });
    this.booked = undefined;
    this.turn.to("sending");
  }

  /** Runs what comes between a part's step and its request: when it throws, the part was not sent. */
  private async unsentIfThrows(between: () => Promise<void>): Promise<void> {
    try {
      await between();
    } catch (err) {
      this.refused();
      throw err;
    }
  }

  /** The fenced step before a send: the buffered writes go out and the part is marked as being sent. */
  private async stepped(part: string): Promise<void> {
    await this.lease.step(this.writes(), part);
    this.turn.to("stepped");
    this.reserved = part;
    this.commit = undefined;
    this.notSent = {};
    // Now in the turn record: a delivery run again in place (a booked slot waited for) skips them.
    for (const [sentPart, ref] of Object.entries(this.sent)) this.record[`part:${sentPart}`] = ref;
    this.sent = {};
  }

  /**
   * Asks again for the slot of `member`, whose time went by while the step waited, and
   * waits for it in the worker: the part is already marked as being sent, so parking
   * now would make its next holder take it for an attempt that may have arrived.
   */
  private retake(windows: SendWindow[], member: string): Promise<boolean> {
    return this.deps.limiter.waitForSlot(windows, member, {
      soonMs: BOOKED_WAIT_MS,
      check: () => {
        if (this.lease.lost) throw new LeaseLostError(this.lease.room);
      },
    });
  }

  answered(): void {
    const slot = this.inFlight;
    this.inFlight = undefined;
    if (!slot) return;
    // Not awaited: the turn's next step need not wait for it. The next command of this
    // process to the bot's windows comes after it on the same connection.
    void this.deps.limiter.answered(slot.windows, slot.member).catch((err: unknown) => {
      this.deps.log.debug({ err: (err as Error).message }, "send's answer time not recorded");
    });
  }

  async hold(windows: SendWindow[], ms: number): Promise<void> {
    await this.deps.limiter.hold(windows, ms);
  }
}

/**
 * Reads a `sending:` mark ("<redis ms> <lease token>") into log fields: when the earlier
 * attempt was reserved and by which worker (the token without its claim counter).
 */
export function attemptOf(mark: string): { earlierAttemptAt?: number; earlierAttemptBy?: string } {
  const [at, token] = mark.split(" ");
  const by = token?.slice(0, token.lastIndexOf(":"));
  return { earlierAttemptAt: Number(at), ...(by ? { earlierAttemptBy: by } : {}) };
}
