import {
  createRunner,
  createSource,
  type RunnerHandle,
  type UpdateSink,
  type UpdateSupplier,
} from "@grammyjs/runner";
import { GrammyError, type Api } from "grammy";
import type { Update } from "grammy/types";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Durability } from "../scheduler/durable-write.js";
import type { Receiver } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import type { Keys } from "../sessions/keys.js";
import { receiverLastPoll } from "../ops/metrics.js";
import { loggableError } from "./loggable-error.js";
import type { OutageNoticeOptions } from "../edge/outage-notices.js";
import { TelegramOutageNotices, type NoticeLimits } from "./outage-notices.js";
import { ChatLanes } from "./chat-lanes.js";
import { StoredOffset } from "./stored-offset.js";
import { UpdateAside } from "./update-aside.js";

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
  /** When people are told that their message could not be queued. */
  notices?: OutageNoticeOptions;
  /** The bot's send windows, where those notices count (without them, they count nowhere). */
  noticeLimits?: NoticeLimits;
}

/** Where a poller keeps its offset and the updates it sets aside. */
export interface PollerStore {
  redis: RedisClient;
  keys: Keys;
  /** The replica waits of acknowledged writes: a set-aside update is confirmed to Telegram. */
  durability: Durability;
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

/**
 * People are told their message waits only while this poller has queued nothing for
 * this long: with one Cluster slot range down the other rooms' updates are queued and
 * answered, and their people are not told.
 */
const NOTICE_QUIET_MS = 10_000;

/** Queueing failing for this long makes the poller stuck in /healthz (one failed try is not). */
const STUCK_AFTER_MS = 2000;

/**
 * Long polling for one bot with @grammyjs/runner, whose source keeps the next offset
 * in Redis: a batch's updates are enqueued first and the stored offset advanced past
 * them after (one write per getUpdates batch, and on stop), so a restart neither
 * replays confirmed updates nor loses unconfirmed ones. The updates of one chat are
 * queued in their order and chats go side by side (src/telegram/chat-lanes.ts), so
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
  /** The people told that their message waits for Redis. */
  private readonly notices: TelegramOutageNotices;
  /** Each chat's updates not queued yet. */
  private readonly lanes: ChatLanes;
  private readonly aside: UpdateAside;
  /** When this poller last queued an update (local ms). */
  private lastQueuedAt = 0;

  constructor(
    private readonly api: Api,
    private readonly botId: number,
    store: PollerStore,
    private readonly receive: (update: Update) => Promise<void>,
    private readonly log: Logger,
    options: Partial<PollingOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.notices = new TelegramOutageNotices(api, log, this.options.notices, this.options.noticeLimits);
    const { redis, keys, durability } = store;
    this.offset = new StoredOffset(redis, keys, botId, log);
    this.aside = new UpdateAside(redis, keys, botId, log, durability);
    this.lanes = new ChatLanes({
      enqueue: (update, refused) => this.enqueue(update, refused),
      aside: this.aside,
      log,
      signal: () => this.stopping.signal,
    });
  }

  /** Loads the stored offset, drops any webhook (getUpdates refuses to run beside one) and starts polling. */
  async start(): Promise<void> {
    if (this.runner?.isRunning()) return;
    this.stopping = new AbortController();
    await this.api.deleteWebhook({ drop_pending_updates: false });
    const offset = await this.offset.load();
    // Updates set aside before a restart come first, each chat's in order.
    const kept = await this.aside.load();
    if (kept.length > 0) {
      this.log.info(
        { botId: this.botId, updates: kept.length },
        "telegram: queueing updates set aside earlier",
      );
      this.lanes.pushAll(kept, true);
    }
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

  /**
   * Queues one update, retrying until it is queued; once stopping, it gives up (the
   * update arrives again after a restart, or is read back from where it was set aside).
   * While it cannot be queued, its person may be told; `refused` runs after the first failure.
   */
  private async enqueue(update: Update, refused: () => void): Promise<void> {
    const since = Date.now();
    await retry(
      async () => {
        // Only a chat just told waits (and any, for a moment, while a notice sent without a slot is recorded).
        await this.notices.beforeQueue(update);
        await this.receive(update);
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
          refused();
          if (Date.now() - this.lastQueuedAt >= NOTICE_QUIET_MS) this.notices.failed(update, err, since);
        },
      },
    );
    this.lastQueuedAt = Date.now();
    this.notices.queued(update);
  }
}
