import {
  createRunner,
  createSource,
  type RunnerHandle,
  type UpdateSink,
  type UpdateSupplier,
} from "@grammyjs/runner";
import { GrammyError, type Api } from "grammy";
import type { Update } from "grammy/types";
import type { Receiver } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import { receiverLastPoll } from "../ops/metrics.js";
import { loggableError } from "./loggable-error.js";
import { StoredOffset } from "./stored-offset.js";
import { UpdateLanes, type LaneOptions, type LaneStore } from "./update-lanes.js";

/** The update kinds roomgate reads; everything else is never fetched. */
export const ALLOWED_UPDATES = [
  "message",
  "edited_message",
  "callback_query",
  "my_chat_member",
  "stopped_message_generation",
] as const;

/** Tuning of one poller (backoffMs also for failed getUpdates); tests shorten the waits. */
export interface PollingOptions extends LaneOptions {
  /** Long-poll timeout of getUpdates, in seconds. */
  timeoutSeconds: number;
}

/** The runner hands out its own AbortSignal implementation; grammY's Api accepts the same one. */
type PollSignal = Parameters<UpdateSupplier<Update>["supply"]>[1];

const DEFAULTS: PollingOptions = { timeoutSeconds: 30, backoffMs: { initial: 1000, max: 30_000 } };

/** Queueing failing for this long makes the poller stuck in /healthz (one failed try is not). */
const STUCK_AFTER_MS = 2000;

/**
 * Long polling for one bot with @grammyjs/runner, whose source keeps the next offset
 * in Redis: a batch's updates are enqueued first and the stored offset advanced past
 * them after (one write per getUpdates batch, and on stop), so a restart neither
 * replays confirmed updates nor loses unconfirmed ones. The updates of one chat are
 * queued in their order and chats go side by side (src/telegram/update-lanes.ts), so
 * that a batch's events reach Redis together (the inbox sends what is queued in one
 * turn of the event loop as one call per shard), and a chat whose room's Cluster slot
 * range is down holds only its own updates: they are set aside in a shard that is up,
 * which lets the offset move past them. Failures (a 409 from a second poller, network
 * errors) are logged and retried with backoff.
 */
export class PollingReceiver implements Receiver {
  private runner: RunnerHandle | undefined;
  private readonly offset: StoredOffset;
  private stopping = new AbortController();
  private readonly options: PollingOptions;
  /** The batch being queued: since when (local ms), its first update, and the last try's error; undefined between batches. */
  private inHand: { since: number; updateId: number; err?: string } | undefined;
  /** Updates of the batch being queued. */
  private batch: Update[] = [];
  /** Each chat's updates not queued yet. */
  private readonly lanes: UpdateLanes;

  constructor(
    private readonly api: Api,
    private readonly botId: number,
    store: LaneStore,
    receive: (update: Update) => Promise<void>,
    private readonly log: Logger,
    options: Partial<PollingOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.offset = new StoredOffset(store.redis, store.keys, botId, log);
    this.lanes = new UpdateLanes(
      api,
      botId,
      store,
      receive,
      log,
      this.options,
      () => this.stopping.signal,
      (err) => {
        if (this.inHand) this.inHand.err = loggableError(err).message;
      },
    );
  }

  /** Loads the stored offset, drops any webhook (getUpdates refuses to run beside one) and starts polling. */
  async start(): Promise<void> {
    if (this.runner?.isRunning()) return;
    this.stopping = new AbortController();
    await this.api.deleteWebhook({ drop_pending_updates: false });
    const offset = await this.offset.load();
    await this.lanes.resume();
    const source = createSource({ supply: (limit, signal) => this.fetch(limit, signal) });
    // One batch at a time, as the runner's sequential sink, but a batch's chats side by side.
    const sink: UpdateSink<Update> = {
      handle: async (updates) => {
        await this.consume(updates).catch((err: unknown) =>
          this.log.warn(
            { err: loggableError(err), botId: this.botId },
            "telegram: updates were left unconfirmed; Telegram delivers them again after a restart",
          ),
        );
        return Infinity;
      },
      size: () => this.batch.length,
      snapshot: () => [...this.batch],
    };
    this.runner = createRunner(source, sink);
    this.runner.start();
    this.log.info({ botId: this.botId, offset }, "telegram: polling started");
  }

  /**
   * Stops polling after the update in hand is enqueued (or given up, to arrive again
   * later), and stores the offset past what a batch cut short had already queued.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.runner?.stop();
    this.runner = undefined;
    await this.offset.storeOnStop();
  }

  private async fetch(limit: number, signal: PollSignal): Promise<Update[]> {
    return retry(
      async () => {
        const updates = await this.api.getUpdates(
          {
            offset: this.offset.value,
            limit: Math.max(1, Math.min(limit, 100)),
            timeout: this.options.timeoutSeconds,
            allowed_updates: [...ALLOWED_UPDATES],
          },
          signal,
        );
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
   * Enqueues a batch through the chats' lanes, then moves the offset past it: every
   * update is then queued or set aside. A stop in the middle moves it past the longest
   * run of such updates from the batch's start, and no further.
   */
  private async consume(updates: Update[]): Promise<void> {
    if (updates.length === 0) return;
    this.batch = updates;
    this.inHand = { since: Date.now(), updateId: updates[0]!.update_id };
    const done = new Set<number>();
    try {
      await Promise.all(
        this.lanes
          .pushAll(updates)
          .map((settled, i) => settled.then(() => void done.add(updates[i]!.update_id))),
      );
    } finally {
      let upTo = 0;
      while (upTo < updates.length && done.has(updates[upTo]!.update_id)) upTo += 1;
      if (upTo > 0) this.offset.advancePast(updates[upTo - 1]!.update_id);
      this.inHand = undefined;
      this.batch = [];
      this.offset.storeSoon();
    }
  }
}
