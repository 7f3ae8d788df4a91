import { Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../core/log.js";
import { UNQUEUED_NOTICE, UnqueuedEventError } from "../core/unqueued.js";
import { loggableError } from "./loggable-error.js";

/** A chat's answer is queued no sooner than this after its notice left. */
const CHAT_GAP_MS = 1200;

/** When and how often people are told that their message could not be queued. */
export interface OutageNoticeOptions {
  /** A message not queued for this long gets its chat told (one failed try is not an outage). */
  afterMs: number;
  /** Notices leave at least this far apart, from this process, for all chats together. */
  paceMs: number;
  /** At most this many chats are told in one outage; the rest wait unsaid. */
  perOutage: number;
  /** A chat told is not told again within this long, however often Redis comes and goes. */
  chatEveryMs: number;
}

/**
 * 10 s before a chat is told: longer than an ordinary failover takes to accept writes
 * again (a Sentinel switchover or a Cluster failover: 3–6 s measured, the promotion plus
 * a replica re-attached), so that people are told of outages, not of every failover;
 * 10 notices a second at most (a third of Telegram's 30 a
 * second for a bot, all the bot sends meanwhile: its replies wait for Redis too); 100
 * chats an outage; a chat once in 10 minutes.
 */
export const OUTAGE_NOTICES: OutageNoticeOptions = {
  afterMs: 10_000,
  paceMs: 100,
  perOutage: 100,
  chatEveryMs: 10 * 60_000,
};

/**
 * Tells the person whose message could not be queued (Redis refusing writes or not
 * answering while the poller retries it) that it will be answered later, once per chat
 * and outage. The notice is sent at most once: it is not recorded anywhere (Redis is
 * the thing that is down), a failed notice is not retried, and it goes through an API
 * of its own without the send limits' Redis windows (which cannot be taken now), paced
 * here instead.
 */
export class OutageNotices {
  private readonly api: Api;
  /** Chats told, and when (local ms). */
  private readonly told = new Map<number, number>();
  /** Local time the next notice may leave. */
  private nextAt = 0;
  /** Notices sent in this outage (reset when a message is queued again). */
  private sent = 0;
  private capped = false;

  constructor(
    api: Api,
    private readonly log: Logger,
    private readonly options: OutageNoticeOptions = OUTAGE_NOTICES,
  ) {
    // The same bot and API root, without the transformers (send limits) of the bot's API.
    this.api = new Api(api.token, api.options);
  }

  /**
   * A try to queue `update` failed with `err`, its first failure `since` (local ms):
   * when the inbox refused it long enough, its chat is told, unless told already.
   */
  failed(update: Update, err: unknown, since: number): void {
    const message = update.message;
    // A private chat's every message is for the bot; in a group, only one the intake chose
    // to queue (where Redis did not answer at all, that is not known, and nobody is told).
    if (!message || !(err instanceof UnqueuedEventError || message.chat.type === "private")) return;
    const now = Date.now();
    if (now - since < this.options.afterMs) return;
    const chatId = message.chat.id;
    const toldAt = this.told.get(chatId);
    if (toldAt !== undefined && now - toldAt < this.options.chatEveryMs) return;
    if (this.sent >= this.options.perOutage) {
      if (!this.capped) this.log.warn({ told: this.sent }, "telegram: outage notices capped for this outage");
      this.capped = true;
      return;
    }
    this.sent += 1;
    const at = Math.max(now, this.nextAt);
    this.told.set(chatId, at);
    this.nextAt = at + this.options.paceMs;
    const topic = message.is_topic_message ? { message_thread_id: message.message_thread_id } : {};
    setTimeout(() => {
      this.api
        .sendMessage(chatId, UNQUEUED_NOTICE, {
          ...topic,
          reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
        })
        .then(
          () => this.log.info({ chatId }, "telegram: told a chat its message waits for Redis"),
          (e: unknown) =>
            this.log.warn({ chatId, err: loggableError(e) }, "telegram: outage notice not sent; not retried"),
        );
    }, at - now).unref();
  }

  /**
   * How long `update` waits before it is queued: a chat just told gets its answer no
   * sooner than a second after the notice (Telegram's one message a second in a chat;
   * the answer's send window in Redis knows nothing of the notice).
   */
  holdFor(update: Update): number {
    const chatId = update.message?.chat.id;
    const at = chatId === undefined ? undefined : this.told.get(chatId);
    return at === undefined ? 0 : Math.max(0, at + CHAT_GAP_MS - Date.now());
  }

  /** An update was queued: the outage (if any) is over, and the next one may tell chats again. */
  queued(): void {
    this.sent = 0;
    this.capped = false;
    const now = Date.now();
    for (const [chat, at] of this.told) if (now - at >= this.options.chatEveryMs) this.told.delete(chat);
  }
}
