import { randomUUID } from "node:crypto";
import type { SendWindow } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { sleep, type Abortable } from "../core/retry.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";

/** How long a notice waits for the send windows' first answer before it goes without a slot. */
const ANSWER_WITHIN_MS = 1000;

/** A slot this close is waited for here; a later one is booked and waited for. */
const SOON_MS = 20;

/** How often notices sent without a slot are tried into the windows while Redis refuses. */
const RECORD_EVERY_MS = 50;

/** Past the longest window a send counts in (a group's minute and its slack), a notice counts nowhere. */
const LONGEST_WINDOW_MS = 61_000;

/** How often a receiver marks that its notices sent without a slot are in the windows (src/scheduler/notice-marks.ts). */
const MARK_EVERY_MS = 1000;

/**
 * A mark Redis runs this long after it was sent is not taken: it may have waited out an
 * outage (ioredis sends it again on reconnecting) in which a notice went without a slot,
 * which comes only after 10 s of refusals.
 */
const MARK_LATE_MS = 1000;

/**
 * A notice sent without a slot: its room, its windows, its member there, and when it was
 * answered (local ms; undefined while it is on its way).
 */
interface Unbooked {
  room: string;
  windows: SendWindow[];
  member: string;
  answeredAt?: number;
}

/** A timer that does not keep the process alive. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Outage notices inside the platform's send limits (src/scheduler/rate-limiter.ts). A
 * notice takes a slot in its windows like any send when they answer (one slot range
 * refusing, the bot's windows elsewhere); when Redis refuses them too, it goes without,
 * and is recorded in them, at the time it was answered, as soon as Redis takes writes
 * (tried every 50 ms), then marks so (src/scheduler/notice-marks.ts). The first bookings
 * after an outage wait for every receiver's mark (`afterOutage` in
 * src/scheduler/slot-calls.ts), so that the notice and the sends after it keep every
 * window's limit.
 */
export class UnbookedNotices {
  private readonly ledger: Unbooked[] = [];
  private recording: Promise<void> | undefined;
  /** This receiver in the marks. */
  private readonly receiver = randomUUID();
  /** Notices whose slot is being asked for: until they have one or are in the ledger, nothing is marked. */
  private asking = 0;
  /** What stops the marking that runs (a receiver started again marks with its new one). */
  private markingUntil: Abortable | undefined;

  constructor(
    private readonly limiter: RedisRateLimiter,
    private readonly log: Logger,
    private readonly platform: string,
    /** The windows' group the marks are kept with (the bot's: one slot with its windows). */
    private readonly group: string,
  ) {}

  /** Sends one notice to `room` with `send` in a slot of `windows`, or without one and recorded later. */
  async send(room: string, windows: SendWindow[], send: () => Promise<void>): Promise<void> {
    const member = `notice:${randomUUID()}`;
    this.asking += 1;
    let booked = false;
    try {
      booked = await this.slot(windows, member);
    } finally {
      this.asking -= 1;
    }
    if (booked) {
      try {
        await send();
      } finally {
        void this.limiter.answered(windows, member).catch(() => undefined);
      }
      return;
    }
    const notice: Unbooked = { room, windows, member };
    this.ledger.push(notice);
    try {
      await send();
    } finally {
      // Sent or not known: it counts as sent from its answer on.
      notice.answeredAt = Date.now();
      this.recordSoon();
    }
  }

  /**
   * Marks, every MARK_EVERY_MS until `signal` aborts, that every notice this receiver
   * sent without a slot is in the windows: after an outage, the first bookings wait for
   * that (src/scheduler/notice-marks.ts). While Redis refuses, it is tried every 50 ms,
   * so that the mark follows within moments of the notices being recorded.
   */
  markWhile(signal: Abortable): void {
    if (this.markingUntil === signal) return;
    this.markingUntil = signal;
    void (async () => {
      const marks = this.limiter.noticeMarks;
      // Redis' clock less this process's, as the last mark's reply told (undefined before).
      let offset: number | undefined;
      while (!signal.aborted) {
        let next = MARK_EVERY_MS;
        try {
          await this.recorded();
          if (this.asking === 0 && this.ledger.length === 0) {
            const sentAt = Date.now();
            const notAfter = offset === undefined ? undefined : sentAt + offset + MARK_LATE_MS;
            const { now, taken } = await marks.mark(this.group, this.receiver, notAfter);
            offset = now - (sentAt + Date.now()) / 2;
            if (!taken) next = RECORD_EVERY_MS;
          } else next = RECORD_EVERY_MS;
        } catch {
          next = RECORD_EVERY_MS;
        }
        await sleep(next, signal).catch(() => undefined);
      }
    })();
  }

  /**
   * Records the notices sent without a slot (to `room`, or all) in their windows now;
   * throws Redis' refusal. A receiver calls it before it queues a message of the room,
   * so that its answer is not booked first.
   */
  async recorded(room?: string): Promise<void> {
    for (const notice of this.ledger.filter((n) => room === undefined || n.room === room)) {
      if (notice.answeredAt === undefined) continue;
      const ago = Date.now() - notice.answeredAt;
      if (ago < LONGEST_WINDOW_MS) await this.limiter.recordPast(notice.windows, notice.member, ago);
      const at = this.ledger.indexOf(notice);
      if (at >= 0) this.ledger.splice(at, 1);
    }
  }

  /** Waits for the slot when the windows answer in time; false when they do not (Redis refusing or away). */
  private async slot(windows: SendWindow[], member: string): Promise<boolean> {
    const first = this.limiter.bookOnce(windows, member, SOON_MS);
    // A call queued while Redis is out of reach answers when it is back: the notice cannot wait for that.
    first.catch(() => undefined);
    const answer = await Promise.race([first, pause(ANSWER_WITHIN_MS).then(() => undefined)]).catch(
      (err: unknown) => {
        this.log.debug(
          { err: err instanceof Error ? err.message : String(err) },
          `${this.platform}: outage notice sent without a slot; recorded once Redis takes writes`,
        );
        return undefined;
      },
    );
    if (!answer) return false;
    try {
      if (answer.waitMs > SOON_MS) await this.limiter.waitForSlot(windows, member, { soonMs: SOON_MS });
      else if (answer.waitMs > 0) await pause(answer.waitMs);
      return true;
    } catch {
      // Booked, then Redis went away: the booking stays (counted twice, never too few).
      return false;
    }
  }

  /** Tries the ledger's answered notices into the windows every RECORD_EVERY_MS until none is left. */
  private recordSoon(): void {
    this.recording ??= (async () => {
      while (this.ledger.some((n) => n.answeredAt !== undefined)) {
        try {
          await this.recorded();
          this.log.info(
            {},
            `${this.platform}: outage notices sent without a slot are now in the send windows`,
          );
        } catch {
          await pause(RECORD_EVERY_MS);
        }
      }
    })().finally(() => (this.recording = undefined));
  }
}
