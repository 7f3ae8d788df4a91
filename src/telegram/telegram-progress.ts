import type { Api } from "grammy";
import type { ProgressUpdate } from "../core/progress.js";
import type { Logger } from "../core/log.js";
import { loggableError } from "./loggable-error.js";
import type { TelegramOrigin } from "../core/origin.js";

/** Telegram asks bots not to edit one chat's messages more often than this. */
export const EDIT_EVERY_MS = 2000;

interface StatusMessage {
  chatId: number;
  messageId: number | undefined;
  /** The newest text not yet shown, flushed when the chat may be edited again. */
  pending: string | undefined;
  flushing: Promise<void>;
}

/**
 * A running call's status message in a Telegram chat: sent on the first update,
 * then edited in place (editMessageText) no more than once per EDIT_EVERY_MS per
 * chat, the latest text winning; `done` shows the final text once allowed.
 */
export class TelegramProgress {
  private readonly messages = new Map<string, StatusMessage>();
  private readonly lastEdit = new Map<number, number>();

  constructor(
    private readonly log: Logger,
    private readonly everyMs = EDIT_EVERY_MS,
  ) {}

  /** Shows one update: the first sends the status message, later ones edit it. */
  async update(api: Api, origin: TelegramOrigin, update: ProgressUpdate): Promise<void> {
    let status = this.messages.get(update.key);
    if (!status) {
      status = {
        chatId: origin.chatId,
        messageId: undefined,
        pending: undefined,
        flushing: Promise.resolve(),
      };
      this.messages.set(update.key, status);
      const sent = await api.sendMessage(origin.chatId, update.text, {
        link_preview_options: { is_disabled: true },
        ...(origin.topicId === undefined ? {} : { message_thread_id: origin.topicId }),
      });
      status.messageId = sent.message_id;
      this.lastEdit.set(origin.chatId, Date.now());
      if (update.done) this.messages.delete(update.key);
      return;
    }
    status.pending = update.text;
    const current = status;
    status.flushing = status.flushing.then(() => this.flush(api, current));
    if (update.done) {
      await status.flushing;
      this.messages.delete(update.key);
    }
  }

  private async flush(api: Api, status: StatusMessage): Promise<void> {
    if (status.pending === undefined || status.messageId === undefined) return;
    const wait = (this.lastEdit.get(status.chatId) ?? 0) + this.everyMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // Several updates may have come in while waiting: only the newest is shown.
    const text = status.pending;
    if (text === undefined) return;
    status.pending = undefined;
    this.lastEdit.set(status.chatId, Date.now());
    try {
      await api.editMessageText(status.chatId, status.messageId, text, {
        link_preview_options: { is_disabled: true },
      });
    } catch (err) {
      this.log.debug({ err: loggableError(err), chatId: status.chatId }, "telegram: progress edit failed");
    }
  }
}
