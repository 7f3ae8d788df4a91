import { Api } from "grammy";
import type { Update } from "grammy/types";
import type { Logger } from "../core/log.js";
import { UNQUEUED_NOTICE, UnqueuedEventError } from "../core/unqueued.js";
import { OutageNotices, type OutageNoticeOptions } from "../edge/outage-notices.js";
import { loggableError } from "./loggable-error.js";

/**
 * One bot's telling of people whose message could not be queued (edge/outage-notices.ts
 * decides who and when): which updates earn a notice, and the notice itself, in reply
 * to the message and in its topic. It goes through an API of its own without the send
 * limits' Redis windows (which cannot be taken now), once: it is not recorded and a
 * failed notice is not retried.
 */
export class TelegramOutageNotices {
  private readonly api: Api;
  private readonly policy: OutageNotices;

  constructor(api: Api, log: Logger, options?: OutageNoticeOptions) {
    // The same bot and API root, without the transformers (send limits) of the bot's API.
    this.api = new Api(api.token, api.options);
    this.policy = new OutageNotices("telegram", log, options, loggableError);
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
    this.policy.failed(String(message.chat.id), since, async () => {
      await this.api.sendMessage(message.chat.id, UNQUEUED_NOTICE, {
        ...topic,
        reply_parameters: { message_id: message.message_id, allow_sending_without_reply: true },
      });
    });
  }

  /** How long `update` waits before it is queued: a chat just told gets its answer after the notice. */
  holdFor(update: Update): number {
    const chatId = update.message?.chat.id;
    return chatId === undefined ? 0 : this.policy.holdFor(String(chatId));
  }

  /** An update was queued: the outage (if any) is over. */
  queued(update?: Update): void {
    this.policy.queued(update && String(update.update_id));
  }
}
