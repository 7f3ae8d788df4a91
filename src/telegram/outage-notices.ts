import { Api } from "grammy";
import type { Update } from "grammy/types";
import type { TelegramLimits } from "../core/config/telegram.js";
import type { Logger } from "../core/log.js";
import type { Abortable } from "../core/retry.js";
import { UNQUEUED_NOTICE, UnqueuedEventError } from "../core/unqueued.js";
import { OutageNotices, type OutageNoticeOptions } from "../edge/outage-notices.js";
import { UnbookedNotices } from "../edge/unbooked-notices.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";
import { loggableError } from "./loggable-error.js";
import { telegramGroup, telegramWindows } from "./send-limits.js";

/** The bot's send windows, where its notices count like every send (src/telegram/send-limits.ts). */
export interface NoticeLimits {
  botId: number;
  limiter: RedisRateLimiter;
  limits: TelegramLimits;
}

/**
 * One bot's telling of people whose message could not be queued (edge/outage-notices.ts
 * decides who and when): which updates earn a notice, and the notice itself, in reply
 * to the message and in its topic. It goes once (a failed notice, or one given up after
 * NOTICE_WAIT_MS with its request aborted, is not retried) through
 * an API of its own without the send limits' retries, in a slot of the bot's, chat's and
 * group's windows when they answer, else without one and recorded in them as soon as
 * Redis takes writes (edge/unbooked-notices.ts).
 */
export class TelegramOutageNotices {
  private readonly api: Api;
  private readonly policy: OutageNotices;
  private readonly unbooked: UnbookedNotices | undefined;

  constructor(
    api: Api,
    log: Logger,
    options?: OutageNoticeOptions,
    private readonly limits?: NoticeLimits,
  ) {
    // The same bot and API root, without the transformers (send limits) of the bot's API.
    this.api = new Api(api.token, api.options);
    this.policy = new OutageNotices("telegram", log, options, loggableError);
    this.unbooked =
      limits && new UnbookedNotices(limits.limiter, log, "telegram", telegramGroup(limits.botId));
  }

  /**
   * A try to queue `update` failed with `err`, its first failure `since` (local ms; by
   * default the first failure seen here): when it waited long enough, its chat is told,
   * unless told already.
   */
  failed(update: Update, err: unknown, since = this.policy.refusedSince(String(update.update_id))): void {
    const message = update.message;
    // A private chat's every message is for the bot; in a group, only one the intake chose
    // to queue (where Redis did not answer at all, that is not known, and nobody is told).
    if (!message || !(err instanceof UnqueuedEventError || message.chat.type === "private")) return;
    const topic = message.is_topic_message ? { message_thread_id: message.message_thread_id } : {};
    const chatId = message.chat.id;
    const { limits, unbooked } = this;
    this.policy.failed(String(chatId), since, (signal) => {
      // Given up (NOTICE_WAIT_MS), the request is aborted, or never made if its slot came too late.
      const send = async () => {
        await this.api.sendMessage(
          chatId,
          UNQUEUED_NOTICE,
          {
            ...topic,
            reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
          },
          // grammY types its signal with the abort-controller package; the platform's is the same at run time.
          signal as unknown as Parameters<Api["sendMessage"]>[3],
        );
      };
      return limits && unbooked
        ? unbooked.send(String(chatId), telegramWindows(limits.botId, chatId, limits.limits), send)
        : send();
    });
  }

  /**
   * Waits before `update` is queued: while its chat's notice is on its way and a moment
   * after (its answer comes after the notice), and until that notice, if sent without a
   * slot, is in the send windows (else the answer could be booked as if it had not been
   * sent); throws Redis' refusal of that.
   */
  async beforeQueue(update: Update): Promise<void> {
    const chatId = update.message?.chat.id;
    if (chatId === undefined) return;
    await this.policy.heldBack(String(chatId));
    await this.unbooked?.recorded(String(chatId));
  }

  /**
   * Marks, until `signal` aborts, that the notices sent without a slot are in the send
   * windows, for the first bookings after an outage to wait for (edge/unbooked-notices.ts).
   */
  markWhile(signal: Abortable): void {
    this.unbooked?.markWhile(signal);
  }

  /** An update was queued: the outage (if any) is over. */
  queued(update?: Update): void {
    this.policy.queued(update && String(update.update_id));
  }
}
