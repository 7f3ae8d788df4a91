import "./crypto-binding.js";
import { MatrixClient, type IStorageProvider } from "matrix-bot-sdk";
import type { Logger } from "../core/log.js";
import { UnqueuedEventError } from "../core/unqueued.js";
import { sleep } from "../core/retry.js";
import { receiverLastPoll } from "../ops/metrics.js";
import { isUnacknowledged } from "../scheduler/durable-write.js";
import { DeviceLeaseLostError } from "./crypto/crypto-errors.js";
import { retryDelay, type MatrixRetryPolicy } from "./matrix-retry.js";

/** What the sync loop hands each response to. */
export interface SyncHandler {
  /** Sees the whole response before its events, `initial` when it came without a `since` token. */
  beforeBatch(raw: unknown, initial: boolean): Promise<void>;
  /** One of the SDK's sync emissions (`room.invite`, `room.join`, `room.event`, …), awaited in order. */
  emit(type: string, ...payload: unknown[]): Promise<void>;
}

/** How soon a batch whose event Redis did not take is fetched again. */
const REDIS_RETRY_MS = 1000;

const SYNC_RETRY: MatrixRetryPolicy = {
  attempts: Infinity,
  firstMs: 1_000,
  jitter: true,
  maxMs: 30_000,
  maxRetryAfterMs: 300_000,
};

/**
 * matrix-bot-sdk's client with a sync loop the adapter can rely on: each response is
 * handled (awaited, in order) before its token is stored, a failed batch is fetched
 * again from the same token, and stopping waits for the batch in hand. The SDK's own
 * loop stores the token before handling and emits without awaiting its listeners.
 * A lost device lease ends the loop at once: the batch in hand is not acknowledged.
 */
export class SyncingMatrixClient extends MatrixClient {
  private handler: SyncHandler | undefined;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly halt = new AbortController();
  private firstBatchDone: (() => void) | undefined;
  /** Settles when the first sync response has been handled, or the first attempt failed. */
  readonly firstBatch = new Promise<void>((resolve) => (this.firstBatchDone = resolve));

  constructor(
    homeserverUrl: string,
    accessToken: string,
    private readonly store: IStorageProvider,
    private readonly log: Logger,
  ) {
    super(homeserverUrl, accessToken, store);
  }

  /** Sets where sync responses go; call before `start`. */
  setSyncHandler(handler: SyncHandler): void {
    this.handler = handler;
  }

  /** Stops syncing; resolves once no batch is being handled. An open long-poll is left to expire unheard. */
  async stopSync(): Promise<void> {
    this.running = false;
    this.stop();
    this.halt.abort();
    this.firstBatchDone?.();
    await this.loop;
  }

  protected override async startSyncInternal(): Promise<void> {
    this.running = true;
    this.loop = this.syncLoop();
  }

  private async syncLoop(): Promise<void> {
    let token = await this.store.getSyncToken();
    let failures = 0;
    let first = true;
    const stopped = this.stopped();
    while (this.running) {
      try {
        const raw = (await Promise.race([this.syncOnce(token, first), stopped])) as {
          next_batch?: unknown;
        };
        if (!this.running) return;
        await this.handler?.beforeBatch(raw, token === null);
        await this.processSync(
          raw,
          (type, ...payload) => this.handler?.emit(type, ...payload) ?? Promise.resolve(),
        );
        if (typeof raw.next_batch === "string") {
          token = raw.next_batch;
          await this.store.setSyncToken(token);
        }
        failures = 0;
        first = false;
        receiverLastPoll.set({ platform: "matrix", receiver: "sync" }, Date.now() / 1000);
        this.firstBatchDone?.();
      } catch (err) {
        this.firstBatchDone?.();
        if (!this.running) return;
        if (err instanceof DeviceLeaseLostError) {
          // Another process owns the device now: syncing on would take its to-device messages.
          this.log.error({ err }, "matrix sync stopped: the device is owned elsewhere now");
          this.running = false;
          return;
        }
        // Redis not taking an event, or the batch's own writes (the sync token, a room's
        // settings), is tried again every second, as the Telegram poller does: the answer
        // is back as soon as Redis is, not after a homeserver backoff (30 s for an error
        // that is not the homeserver's).
        const unqueued = err instanceof UnqueuedEventError;
        const refused = unqueued || isUnacknowledged(err);
        const delay = refused
          ? REDIS_RETRY_MS
          : (retryDelay(err, failures++, SYNC_RETRY) ?? SYNC_RETRY.maxMs);
        this.log.warn(
          { err, delayMs: Math.round(delay), failures },
          unqueued
            ? "matrix: could not queue an event; its batch is fetched again"
            : refused
              ? "matrix: Redis did not take the sync's writes; its batch is fetched again"
              : "matrix sync failed; retrying",
        );
        await sleep(delay, this.halt.signal).catch(() => undefined);
      }
    }
  }

  /**
   * One sync request. The first one does not wait for new events (timeout 0): a process
   * that starts, or takes the device over, catches up at once and is ready, rather than
   * after a long-poll in a quiet room.
   */
  private async syncOnce(token: string | null, catchUp: boolean): Promise<unknown> {
    if (!catchUp) return this.doSync(token ?? "");
    const timeout = this.syncingTimeout;
    this.syncingTimeout = 0;
    try {
      return await this.doSync(token ?? "");
    } finally {
      this.syncingTimeout = timeout;
    }
  }

  /** Resolves when `stopSync` is called, so an open long-poll does not hold up a stop. */
  private stopped(): Promise<void> {
    const signal = this.halt.signal;
    return new Promise((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}
