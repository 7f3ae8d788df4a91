import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { sleep } from "../core/retry.js";

/** When and how often people are told that their message could not be queued. */
export interface OutageNoticeOptions {
  /** A message not queued for this long gets its room told (one failed try is not an outage). */
  afterMs: number;
  /** Notices leave at least this far apart, from this process, for all rooms together. */
  paceMs: number;
  /** At most this many rooms are told in one outage; the rest wait unsaid. */
  perOutage: number;
  /** A room told is not told again within this long, however often Redis comes and goes. */
  roomEveryMs: number;
}

/**
 * 10 s before a room is told: longer than an ordinary failover takes to accept writes
 * again (a Sentinel switchover or a Cluster failover: 3–6 s measured, the promotion plus
 * a replica re-attached), so that people are told of outages, not of every failover;
 * 10 notices a second at most (a third of Telegram's 30 a second for a bot, all the bot
 * sends meanwhile: its replies wait for Redis too); 100 rooms an outage; a room once in
 * 10 minutes.
 */
export const OUTAGE_NOTICES: OutageNoticeOptions = {
  afterMs: 10_000,
  paceMs: 100,
  perOutage: 100,
  roomEveryMs: 10 * 60_000,
};

/**
 * A told room's message is queued no sooner than this after its notice was answered, so
 * that on every platform its answer comes after the notice (the send windows keep the
 * limits: the notice is in them, src/edge/unbooked-notices.ts).
 */
const ANSWER_GAP_MS = 1200;

/**
 * The longest a notice (its slot and its request) may hold its room's next message: then
 * it is given up (its request aborted) and counts as failed. A platform API that hangs
 * must not hold the room for its client's own timeout (grammY's is minutes), and the
 * notice has waited afterMs already; 10 s is far beyond a notice's usual second.
 */
export const NOTICE_WAIT_MS = 10_000;

/** How often a room's message looks again whether the room's notice has gone (it may wait for its slot). */
const SENDING_POLL_MS = 50;

/** First refusals remembered, for adapters whose platform re-delivers a message (few at a time). */
const REMEMBERED = 1000;

/**
 * Who is told, and when, that their message could not be queued (Redis refusing writes
 * or not answering while the adapter keeps the message unconfirmed at the platform):
 * once per room and outage, paced, capped, and never in Redis (the thing that is down).
 * The adapter says how to tell a room (`send`: one attempt, not retried, on a path that
 * needs no Redis) and calls `queued` whenever a message is queued, which ends the outage.
 */
export class OutageNotices {
  /** Rooms told, and when their notice was answered (local ms; when it was due, until then). */
  private readonly told = new Map<string, number>();
  /** Rooms whose notice is due or on its way. */
  private readonly sending = new Set<string>();
  /** Local time the next notice may leave. */
  private nextAt = 0;
  /** Notices sent in this outage (reset when a message is queued again). */
  private sent = 0;
  private capped = false;
  /** When each message not yet queued was first refused, by the adapter's key for it. */
  private readonly firstRefused = new Map<string, number>();

  constructor(
    private readonly platform: string,
    private readonly log: Logger,
    private readonly options: OutageNoticeOptions = OUTAGE_NOTICES,
    /** What the log gets of a failed notice (an adapter's error may carry a secret to scrub). */
    private readonly loggable: (err: unknown) => unknown = (err) => err,
  ) {}

  /**
   * A message of `room`, first refused `since` (local ms), is still not queued: once it
   * has waited long enough, the room is told with `send`, unless told already or the
   * outage's cap is reached. `send` gets a signal aborted after NOTICE_WAIT_MS, when the
   * notice is given up whether or not `send` heeds it.
   */
  failed(room: string, since: number, send: (signal: AbortSignal) => Promise<void>): void {
    const now = Date.now();
    if (now - since < this.options.afterMs) return;
    const toldAt = this.told.get(room);
    if (toldAt !== undefined && now - toldAt < this.options.roomEveryMs) return;
    if (this.sent >= this.options.perOutage) {
      if (!this.capped)
        this.log.warn({ told: this.sent }, `${this.platform}: outage notices capped for this outage`);
      this.capped = true;
      return;
    }
    this.sent += 1;
    const at = Math.max(now, this.nextAt);
    this.told.set(room, at);
    this.sending.add(room);
    this.nextAt = at + this.options.paceMs;
    setTimeout(() => {
      const giveUp = new AbortController();
      const timer = setTimeout(() => giveUp.abort(new NoticeTimeoutError(room)), NOTICE_WAIT_MS);
      const givenUp = new Promise<never>((_, reject) =>
        giveUp.signal.addEventListener("abort", () => reject(giveUp.signal.reason as Error)),
      );
      Promise.race([send(giveUp.signal), givenUp])
        .then(
          () => this.log.info({ room }, `${this.platform}: told a room its message waits for Redis`),
          (err: unknown) =>
            this.log.warn(
              { room, err: this.loggable(err) },
              `${this.platform}: outage notice not sent; not retried`,
            ),
        )
        .finally(() => {
          clearTimeout(timer);
          this.sending.delete(room);
          this.told.set(room, Date.now());
        });
    }, at - now).unref();
  }

  /** How long `room`'s message waits before it is queued: only a room just told (or being told) waits. */
  holdFor(room: string): number {
    if (this.sending.has(room)) return SENDING_POLL_MS;
    const at = this.told.get(room);
    return at === undefined ? 0 : Math.max(0, at + ANSWER_GAP_MS - Date.now());
  }

  /** Waits as long as `room`'s message is held back by its notice (holdFor, looked at again after each wait). */
  async heldBack(room: string): Promise<void> {
    for (let ms = this.holdFor(room); ms > 0; ms = this.holdFor(room)) await sleep(ms);
  }

  /**
   * When the message `key` was first refused, for an adapter that gets it again from its
   * platform rather than holding it (a webhook's update, a sync batch fetched again):
   * now, the first time.
   */
  refusedSince(key: string): number {
    const known = this.firstRefused.get(key);
    if (known !== undefined) return known;
    if (this.firstRefused.size >= REMEMBERED)
      this.firstRefused.delete(this.firstRefused.keys().next().value!);
    const now = Date.now();
    this.firstRefused.set(key, now);
    return now;
  }

  /** A message (`key`, if the adapter gave one to refusedSince) was queued: the outage (if any) is over. */
  queued(key?: string): void {
    if (key !== undefined) this.firstRefused.delete(key);
    if (this.sent === 0 && this.told.size === 0) return;
    this.sent = 0;
    this.capped = false;
    const now = Date.now();
    for (const [room, at] of this.told) if (now - at >= this.options.roomEveryMs) this.told.delete(room);
  }
}

/** A notice not sent within NOTICE_WAIT_MS: given up, so that its room's message goes on. */
export class NoticeTimeoutError extends RoomgateError {
  constructor(readonly room: string) {
    super(`outage notice to ${room} not answered within ${NOTICE_WAIT_MS} ms; given up`);
  }
}
