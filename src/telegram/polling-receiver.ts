import {
  createRunner,
  createSequentialSink,
  createSource,
  type RunnerHandle,
  type UpdateSupplier,
} from "@grammyjs/runner";
import { GrammyError, type Api } from "grammy";
import type { Update } from "grammy/types";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Receiver } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import type { Keys } from "../sessions/keys.js";
import { receiverLastPoll } from "../ops/metrics.js";
import { loggableError } from "./loggable-error.js";

/** The update kinds roomgate reads; everything else is never fetched. */
export const ALLOWED_UPDATES = [
  "message",
  "edited_message",
  "callback_query",
  "my_chat_member",
  "stopped_message_generation",
] as const;

/** Tuning of one poller; tests shorten the waits. */
export interface PollingOptions {
  /** Long-poll timeout of getUpdates, in seconds. */
  timeoutSeconds: number;
  /** First and longest wait after a failed getUpdates or enqueue, in ms. */
  backoffMs: { initial: number; max: number };
}

/** The runner hands out its own AbortSignal implementation; grammY's Api accepts the same one. */
type PollSignal = Parameters<UpdateSupplier<Update>["supply"]>[1];

const DEFAULTS: PollingOptions = { timeoutSeconds: 30, backoffMs: { initial: 1000, max: 30_000 } };

/**
 * The longest wait between two tries to queue an update: Redis refusing or not
 * answering is retried at least this often, so the poller resumes within it of Redis
 * being back (a failover's end) rather than after a long backoff.
 */
const ENQUEUE_RETRY_MAX_MS = 1000;

/** Queueing failing for this long makes the poller stuck in /healthz (one failed try is not). */
const STUCK_AFTER_MS = 2000;

/**
 * Long polling for one bot with @grammyjs/runner, whose source keeps the next offset
 * in Redis: a batch's updates are enqueued first and the stored offset advanced past
 * them after (one write per getUpdates batch, and on stop), so a restart neither
 * replays confirmed updates nor loses unconfirmed ones. Failures (a 409 from a second
 * poller, network errors) are logged and retried with backoff.
 */
export class PollingReceiver implements Receiver {
  private runner: RunnerHandle | undefined;
  /** The next update id to ask for: every update before it is queued. */
  private offset = 0;
  /** The offset last written to Redis. */
  private stored = 0;
  /** The id of the last update of the batch being consumed (the sink takes one batch at a time). */
  private batchLast = 0;
  private stopping = new AbortController();
  private readonly options: PollingOptions;
  /** The update being queued: since when (local ms), and the last try's error; undefined between updates. */
  private inHand: { since: number; updateId: number; err?: string } | undefined;

  constructor(
    private readonly api: Api,
    private readonly botId: number,
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly receive: (update: Update) => Promise<void>,
    private readonly log: Logger,
    options: Partial<PollingOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Loads the stored offset, drops any webhook (getUpdates refuses to run beside one) and starts polling. */
  async start(): Promise<void> {
    if (this.runner?.isRunning()) return;
    this.stopping = new AbortController();
    await this.api.deleteWebhook({ drop_pending_updates: false });
    this.offset = Number((await this.redis.get(this.keys.telegramOffset(this.botId))) ?? 0);
    this.stored = this.offset;
    const source = createSource({ supply: (limit, signal) => this.fetch(limit, signal) });
    const sink = createSequentialSink({ consume: (update: Update) => this.consume(update) }, async (err) => {
      this.log.warn(
        { err: loggableError(err), botId: this.botId },
        "telegram: an update was left unconfirmed; Telegram delivers it again after a restart",
      );
    });
    this.runner = createRunner(source, sink);
    this.runner.start();
    this.log.info({ botId: this.botId, offset: this.offset }, "telegram: polling started");
  }

  /**
   * Stops polling after the update in hand is enqueued (or given up, to arrive again
   * later), and stores the offset past what a batch cut short had already queued.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.runner?.stop();
    this.runner = undefined;
    if (this.offset > this.stored) {
      await this.storeOffset().catch((err: unknown) =>
        // Harmless: the queued updates arrive again and the inbox drops them as duplicates.
        this.log.warn(
          { err: loggableError(err), botId: this.botId },
          "telegram: could not store the offset on stop",
        ),
      );
    }
  }

  private async storeOffset(): Promise<void> {
    const offset = this.offset;
    await this.redis.set(this.keys.telegramOffset(this.botId), String(offset));
    this.stored = Math.max(this.stored, offset);
  }

  private async fetch(limit: number, signal: PollSignal): Promise<Update[]> {
    return retry(
      async () => {
        const updates = await this.api.getUpdates(
          {
            offset: this.offset,
            limit: Math.max(1, Math.min(limit, 100)),
            timeout: this.options.timeoutSeconds,
            allowed_updates: [...ALLOWED_UPDATES],
          },
          signal,
        );
        this.batchLast = updates.at(-1)?.update_id ?? this.batchLast;
        receiverLastPoll.set({ platform: "telegram", receiver: String(this.botId) }, Date.now() / 1000);
        return updates;
      },
      () => "retry",
      this.backoff(),
      { signal, onRetry: ({ err, waitMs }) => this.logFetchError(err, waitMs) },
    );
  }

  /** Why this bot takes no updates now (it cannot queue them), for /healthz; undefined while it can. */
  stuck(): string | undefined {
    const update = this.inHand;
    if (!update || Date.now() - update.since < STUCK_AFTER_MS) return undefined;
    const seconds = Math.round((Date.now() - update.since) / 1000);
    return `bot ${this.botId}: could not queue update ${update.updateId} for ${seconds} s (${update.err ?? "Redis has not answered"})`;
  }

  /** Waits double from the first to the longest; a poller retries for as long as it runs. */
  private backoff(): RetryPolicy {
    const { initial, max } = this.options.backoffMs;
    return { firstMs: initial, maxMs: max, attempts: Infinity };
  }

  private logFetchError(err: unknown, retryInMs: number): void {
    const context = { botId: this.botId, retryInMs };
    if (err instanceof GrammyError && err.error_code === 409) {
      this.log.warn(
        { ...context, description: err.description },
        "telegram: 409 Conflict: another process is polling this bot token (or a webhook is set); retrying",
      );
    } else if (err instanceof GrammyError && err.error_code === 401) {
      this.log.error(context, "telegram: the bot token was rejected (401 Unauthorized); retrying");
    } else {
      this.log.warn({ ...context, err: loggableError(err) }, "telegram: getUpdates failed; retrying");
    }
  }

  /**
   * Enqueues one update and, when it ends its batch, stores the offset past the batch,
   * retrying until Redis takes both (an update queued twice is dropped as a duplicate).
   */
  private async consume(update: Update): Promise<void> {
    // Once stopping, nothing more is confirmed: the rest of the batch arrives again after restart.
    this.inHand = { since: Date.now(), updateId: update.update_id };
    await retry(
      async () => {
        await this.receive(update);
        this.offset = Math.max(this.offset, update.update_id + 1);
        if (update.update_id >= this.batchLast) await this.storeOffset();
        this.inHand = undefined;
      },
      () => "retry",
      { ...this.backoff(), maxMs: Math.min(this.options.backoffMs.max, ENQUEUE_RETRY_MAX_MS) },
      {
        signal: this.stopping.signal,
        onRetry: ({ err, waitMs }) => {
          if (this.inHand) this.inHand.err = loggableError(err).message;
          this.log.warn(
            { err: loggableError(err), botId: this.botId, updateId: update.update_id, retryInMs: waitMs },
            "telegram: could not enqueue an update; retrying",
          );
        },
      },
    );
  }
}
