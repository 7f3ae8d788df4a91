import type { DeliveryLedger, SendGate, SendWindow } from "../core/adapter.js";
import { LeaseLostError, SendDeferredError } from "../core/delivery-errors.js";
import type { Logger } from "../core/log.js";
import type { RedisRateLimiter } from "../sessions/rate-limiter.js";
import type { CommitRecord } from "../sessions/session-store.js";
import { resentUnknownPartsTotal } from "../ops/metrics.js";
import type { RoomLease } from "./room-lease.js";
import type { TurnWrites } from "./scheduler-scripts.js";

/**
 * Waits shorter than this are waited out in the worker; longer ones give the slot back.
 * Not a setting: parking costs about two round trips and a claim, so a wait shorter
 * than that is cheaper to sleep through; anything longer must not hold a worker (DESIGN §8).
 */
const PARK_AFTER_MS = 20;

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
  /** A part marked "sending" whose send slot was not taken: the park takes the mark back. */
  private marked = "";

  constructor(
    private readonly deps: {
      limiter: RedisRateLimiter;
      /** The turn's logger (its turn id and room bound). */
      log: Logger;
      platform: string;
    },
    private readonly lease: RoomLease,
    private readonly record: Record<string, string>,
  ) {}

  /** Buffers the turn's commit; it is written before the first send, or with the finish. */
  setCommit(commit: CommitRecord): void {
    this.commit = commit;
  }

  /** The buffered writes as script arguments ("" when none). */
  writes(): TurnWrites {
    return {
      commit: this.commit ? JSON.stringify(this.commit) : "",
      sent: Object.keys(this.sent).length > 0 ? JSON.stringify(this.sent) : "",
    };
  }

  /** The part marked as being sent that never got its slot, or "". */
  unsentPart(): string {
    return this.marked;
  }

  async get(partKey: string): Promise<string | null> {
    const done = this.sent[partKey] ?? this.record[`part:${partKey}`];
    if (done !== undefined) return done;
    const mark = this.record[`sending:${partKey}`];
    if (mark !== undefined && !this.warned.has(partKey)) {
      // Telegram has no idempotency key: an attempt whose answer was never recorded (a 429, a
      // timeout, a worker that died) is sent again, which duplicates it only if it had arrived.
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
  }

  async reserve(windows: SendWindow[], partKey?: string): Promise<void> {
    await this.lease.step(this.writes(), partKey ?? "");
    this.commit = undefined;
    this.sent = {};
    this.marked = partKey ?? "";
    // The slot is taken last, right before the request leaves: the time between the two is
    // what the windows' slack must cover, so nothing else may run in it.
    for (
      let left = await this.deps.limiter.tryAcquire(windows);
      left > 0;
      left = await this.deps.limiter.tryAcquire(windows)
    ) {
      if (left > PARK_AFTER_MS) throw new SendDeferredError(left, "send window full");
      await new Promise((resolve) => setTimeout(resolve, left));
      if (this.lease.lost) throw new LeaseLostError(this.lease.room);
    }
    this.marked = "";
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
