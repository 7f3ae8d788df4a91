import type { Logger } from "../core/log.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Keys } from "../sessions/keys.js";
import { loggableError } from "./loggable-error.js";

/**
 * The next update id one bot's poller asks Telegram for, kept in Redis so that a
 * restart neither replays confirmed updates nor loses unconfirmed ones. It is written
 * in the background, one write at a time (the key's slot may be in a range that is
 * down): a stored offset behind the confirmed one only makes a restart ask for
 * updates Telegram has forgotten.
 */
export class StoredOffset {
  /** The next update id to ask for: every update before it is queued. */
  private next = 0;
  /** The offset last written to Redis. */
  private stored = 0;
  /** An offset write in flight (one at a time; a failed one is tried again after the next batch). */
  private storing: Promise<void> | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly botId: number,
    private readonly log: Logger,
  ) {}

  /** The next update id to ask for. */
  get value(): number {
    return this.next;
  }

  /** Reads the offset a previous poller stored. */
  async load(): Promise<number> {
    this.next = Number((await this.redis.get(this.keys.telegramOffset(this.botId))) ?? 0);
    this.stored = this.next;
    return this.next;
  }

  /** Moves the offset past `updateId`, never back (`storeSoon` writes it). */
  advancePast(updateId: number): void {
    this.next = Math.max(this.next, updateId + 1);
  }

  /** Stores the offset in the background when it moved; the poller goes on meanwhile. */
  storeSoon(): void {
    if (this.storing || this.next <= this.stored) return;
    this.storing = this.store()
      .catch((err: unknown) =>
        this.log.debug(
          { err: loggableError(err).message, botId: this.botId },
          "telegram: offset not stored yet",
        ),
      )
      .finally(() => (this.storing = undefined));
  }

  /** Stores the offset once more on stop, past what a batch cut short had already queued. */
  async storeOnStop(): Promise<void> {
    if (this.next <= this.stored) return;
    await this.store().catch((err: unknown) =>
      // Harmless: the queued updates arrive again and the inbox drops them as duplicates.
      this.log.warn(
        { err: loggableError(err), botId: this.botId },
        "telegram: could not store the offset on stop",
      ),
    );
  }

  private async store(): Promise<void> {
    const offset = this.next;
    await this.redis.set(this.keys.telegramOffset(this.botId), String(offset));
    this.stored = Math.max(this.stored, offset);
  }
}
