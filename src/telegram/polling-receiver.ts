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
import type { Receiver } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { retry, sleep, type RetryPolicy } from "../core/retry.js";
import type { Keys } from "../sessions/keys.js";
import { receiverLastPoll } from "../ops/metrics.js";
import { loggableError } from "./loggable-error.js";
import type { OutageNoticeOptions } from "../edge/outage-notices.js";
import { TelegramOutageNotices } from "./outage-notices.js";

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
 * replays confirmed updates nor loses unconfirmed ones. The updates of one chat are
 * queued in their order and chats go side by side, so that a batch's events reach
 * Redis together (the inbox sends what is queued in one turn of the event loop as one
 * call per shard). Failures (a 409 from a second poller, network errors) are logged
 * and retried with backoff.
 */
export class PollingReceiver implements Receiver {
  private runner: RunnerHandle | undefined;
  /** The next update id to ask for: every update before it is queued. */
  private offset = 0;
  /** The offset last written to Redis. */
  private stored = 0;
  private stopping = new AbortController();
  private readonly options: PollingOptions;
  /** The batch being queued: since when (local ms), its first update, and the last try's error; undefined between batches. */
  private inHand: { since: number; updateId: number; err?: string } | undefined;
  /** Updates of the batch being queued. */
  private batch: Update[] = [];
  /** The people told that their message waits for Redis. */
  private readonly notices: TelegramOutageNotices;

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
    this.notices = new TelegramOutageNotices(api, log, this.options.notices);
  }

  /** Loads the stored offset, drops any webhook (getUpdates refuses to run beside one) and starts polling. */
  async start(): Promise<void> {
    if (this.runner?.isRunning()) return;
    this.stopping = new AbortController();
    await this.api.deleteWebhook({ drop_pending_updates: false });
    this.offset = Number((await this.redis.get(this.keys.telegramOffset(this.botId))) ?? 0);
    this.stored = this.offset;
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
   * Enqueues a batch, each chat's updates in their order and chats side by side, then
   * stores the offset past the batch; each update and the offset are retried until Redis
   * takes them (an update queued twice is dropped as a duplicate).
   */
  private async consume(updates: Update[]): Promise<void> {
    if (updates.length === 0) return;
    this.batch = updates;
    this.inHand = { since: Date.now(), updateId: updates[0]!.update_id };
    // The offset moves past the longest run of queued updates from the batch's start, so a
    // stop in the middle stores no more than what was queued.
    const queued = new Set<number>();
    let upTo = 0;
    const advance = (update: Update) => {
      queued.add(update.update_id);
      while (upTo < updates.length && queued.has(updates[upTo]!.update_id)) upTo += 1;
      if (upTo > 0) this.offset = Math.max(this.offset, updates[upTo - 1]!.update_id + 1);
    };
    try {
      await Promise.all(
        chats(updates).map(async (chat) => {
          for (const update of chat) {
            await this.untilDone(
              update.update_id,
              async () => {
                // Only a chat just told waits; the rest go on without a timer's turn.
                const held = this.notices.holdFor(update);
                if (held > 0) await sleep(held);
                await this.receive(update);
              },
              update,
            );
            advance(update);
          }
        }),
      );
      await this.untilDone(updates.at(-1)!.update_id, () => this.storeOffset());
    } finally {
      this.inHand = undefined;
      this.batch = [];
    }
  }

  /**
   * Runs `work` until it succeeds; once stopping, nothing more is confirmed (the rest
   * arrives again after restart). While `update` cannot be queued, its person may be told.
   */
  private async untilDone(updateId: number, work: () => Promise<void>, update?: Update): Promise<void> {
    const since = Date.now();
    await retry(
      work,
      () => "retry",
      { ...this.backoff(), maxMs: Math.min(this.options.backoffMs.max, ENQUEUE_RETRY_MAX_MS) },
      {
        signal: this.stopping.signal,
        onRetry: ({ err, waitMs }) => {
          if (this.inHand) this.inHand.err = loggableError(err).message;
          this.log.warn(
            { err: loggableError(err), botId: this.botId, updateId, retryInMs: waitMs },
            "telegram: could not enqueue an update; retrying",
          );
          if (update) this.notices.failed(update, err, since);
        },
      },
    );
    if (update) this.notices.queued();
  }
}

/**
 * A batch's updates by chat, each chat's in their order. A batch with a group's
 * migration to a supergroup stays one sequence: the old chat's and the new chat's
 * updates must be seen in Telegram's order.
 */
function chats(updates: Update[]): Update[][] {
  if (
    updates.some(
      (u) => u.message?.migrate_to_chat_id !== undefined || u.message?.migrate_from_chat_id !== undefined,
    )
  )
    return [updates];
  const byChat = new Map<number | string, Update[]>();
  for (const update of updates) {
    const chat =
      update.message?.chat.id ??
      update.edited_message?.chat.id ??
      update.callback_query?.message?.chat.id ??
      update.my_chat_member?.chat.id ??
      "other";
    const list = byChat.get(chat);
    if (list) list.push(update);
    else byChat.set(chat, [update]);
  }
  return [...byChat.values()];
}
