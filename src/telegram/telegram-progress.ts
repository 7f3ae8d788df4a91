import type { Api } from "grammy";
import type { Logger } from "../core/log.js";
import type { TelegramOrigin } from "../core/origin.js";
import type { ProgressUpdate } from "../core/progress.js";
import { ThrottledStatus } from "../core/throttled-status.js";
import { loggableError } from "./loggable-error.js";

/** Telegram asks bots not to edit one chat's messages more often than this. */
export const EDIT_EVERY_MS = 2000;

/**
 * A running call's status message in a Telegram chat: sent on the first update,
 * then edited in place (editMessageText) no more than once per EDIT_EVERY_MS per
 * chat, the latest text winning; `done` shows the final text once allowed.
 */
export class TelegramProgress {
  private readonly status = new ThrottledStatus<number>(EDIT_EVERY_MS);

  constructor(private readonly log: Logger) {}

  /** Shows one update: the first sends the status message, later ones edit it. */
  async update(api: Api, origin: TelegramOrigin, update: ProgressUpdate): Promise<void> {
    const { chatId, topicId } = origin;
    await this.status.update(update, {
      space: String(chatId),
      post: async (text) => {
        const sent = await api.sendMessage(chatId, text, {
          link_preview_options: { is_disabled: true },
          ...(topicId === undefined ? {} : { message_thread_id: topicId }),
        });
        return sent.message_id;
      },
      edit: async (messageId, text) => {
        try {
          await api.editMessageText(chatId, messageId, text, { link_preview_options: { is_disabled: true } });
        } catch (err) {
          this.log.debug({ err: loggableError(err), chatId }, "telegram: progress edit failed");
        }
      },
    });
  }
}
