import type { Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../core/log.js";
import { retry, type Abortable } from "../core/retry.js";
import type { OutageNoticeOptions } from "../edge/outage-notices.js";
import type { Durability } from "../scheduler/durable-write.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { ChatLanes } from "./chat-lanes.js";
import { loggableError } from "./loggable-error.js";
import { TelegramOutageNotices, type NoticeLimits } from "./outage-notices.js";
import { UpdateAside } from "./update-aside.js";

/** Where a receiver keeps the updates it sets aside (and the poller its offset). */
export interface LaneStore {
  redis: RedisClient;
  keys: Keys;
  /** The replica waits of acknowledged writes: a set-aside update is confirmed to Telegram. */
  durability: Durability;
}

/** How one bot's updates are queued; tests shorten the waits. */
export interface LaneOptions {
  /** First and longest wait after a failed enqueue, in ms (capped at ENQUEUE_RETRY_MAX_MS). */
  backoffMs: { initial: number; max: number };
  /** When people are told that their message could not be queued. */
  notices?: OutageNoticeOptions;
  /** The bot's send windows, where those notices count (without them, they count nowhere). */
  noticeLimits?: NoticeLimits;
}

/**
 * The longest wait between two tries to queue an update: Redis refusing or not
 * answering is retried at least this often, so the receiver resumes within it of Redis
 * being back (a failover's end) rather than after a long backoff.
 */
const ENQUEUE_RETRY_MAX_MS = 1000;

/**
 * People are told their message waits only while this bot has queued nothing for
 * this long: with one Cluster slot range down the other rooms' updates are queued and
 * answered, and their people are not told.
 */
const NOTICE_QUIET_MS = 10_000;

/**
 * One bot's way from a received update to the inbox, shared by the poller and the
 * webhook: each chat's updates in their order, chats apart (chat-lanes.ts), a chat held
 * by its room's dead Cluster slot range set aside in Redis (update-aside.ts) so that the
 * receiver may confirm it to Telegram and take the next one, every try retried until it
 * is queued, and the people whose message waits told once (outage-notices.ts).
 */
export class UpdateLanes {
  private readonly notices: TelegramOutageNotices;
  private readonly lanes: ChatLanes;
  private readonly aside: UpdateAside;
  /** When this bot last queued an update (local ms). */
  private lastQueuedAt = 0;
  /** Why each update not queued yet was last refused. */
  private readonly refusals = new Map<number, string>();

  constructor(
    api: Api,
    private readonly botId: number,
    store: LaneStore,
    private readonly receive: (update: Update) => Promise<void>,
    private readonly log: Logger,
    private readonly options: LaneOptions,
    /** Aborted when the receiver stops: what is in hand then is given up, to arrive again. */
    private readonly stopping: () => Abortable,
    /** Told of every failed try (the poller's health line). */
    private readonly onRefused: (err: unknown) => void = () => undefined,
  ) {
    this.notices = new TelegramOutageNotices(api, log, options.notices, options.noticeLimits);
    const { redis, keys, durability } = store;
    this.aside = new UpdateAside(redis, keys, botId, log, durability);
    this.lanes = new ChatLanes({
      enqueue: (update, refused) => this.enqueue(update, refused),
      aside: this.aside,
      log,
      signal: stopping,
    });
  }

  /**
   * Puts the updates set aside before a restart first in their chats' lanes, each chat's
   * in order, and starts marking the notices sent without a slot as recorded until the
   * receiver stops (outage-notices.ts).
   */
  async resume(): Promise<void> {
    this.notices.markWhile(this.stopping());
    const kept = await this.aside.load();
    if (kept.length === 0) return;
    this.log.info(
      { botId: this.botId, updates: kept.length },
      "telegram: queueing updates set aside earlier",
    );
    this.lanes.pushAll(kept, true);
  }

  /** Each update's promise resolves once it is queued or set aside (ChatLanes.pushAll). */
  pushAll(updates: Update[]): Promise<void>[] {
    return this.lanes.pushAll(updates);
  }

  /** What Redis last said to a try to queue `updateId`, while it is not queued. */
  refusal(updateId: number): string | undefined {
    return this.refusals.get(updateId);
  }

  /**
   * Queues one update, retrying until it is queued; once stopping, it gives up (the
   * update arrives again after a restart, or is read back from where it was set aside).
   * While it cannot be queued, its person may be told; `refused` runs after the first failure.
   */
  private async enqueue(update: Update, refused: () => void): Promise<void> {
    const since = Date.now();
    const { initial, max } = this.options.backoffMs;
    try {
      await retry(
        async () => {
          // Only a chat just told waits (and any, for a moment, while a notice sent without a slot is recorded).
          await this.notices.beforeQueue(update);
          await this.receive(update);
        },
        () => "retry",
        { firstMs: initial, maxMs: Math.min(max, ENQUEUE_RETRY_MAX_MS), attempts: Infinity },
        {
          signal: this.stopping(),
          onRetry: ({ err, waitMs }) => {
            this.refusals.set(update.update_id, loggableError(err).message);
            this.onRefused(err);
            this.log.warn(
              { err: loggableError(err), botId: this.botId, updateId: update.update_id, retryInMs: waitMs },
              "telegram: could not enqueue an update; retrying",
            );
            refused();
            if (Date.now() - this.lastQueuedAt >= NOTICE_QUIET_MS) this.notices.failed(update, err, since);
          },
        },
      );
    } finally {
      this.refusals.delete(update.update_id);
    }
    this.lastQueuedAt = Date.now();
    this.notices.queued(update);
  }
}
