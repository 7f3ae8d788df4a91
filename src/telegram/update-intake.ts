import type { Api } from "grammy";
import type { Update } from "grammy/types";
import type { Inbox } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import type { DocumentReader } from "./document-reader.js";
import { normalizeUpdate, type BotIdentity } from "./update-normalizer.js";
import { loggableError } from "./loggable-error.js";
import { reaskEdit } from "./telegram-edits.js";

/**
 * Callback data of the single button left on an offer once an option was chosen: a
 * press on it only stops the client's spinner, it never becomes a turn.
 */
export const CHOSEN_BUTTON_DATA = "rg:chosen";

/**
 * Where both receivers hand updates: normalises one update and enqueues it. It
 * throws when the inbox cannot take the event, so that the update is not confirmed
 * and arrives again.
 */
export class UpdateIntake {
  constructor(
    private readonly api: Api,
    readonly identity: BotIdentity,
    private readonly reader: DocumentReader,
    private readonly inbox: Inbox,
    private readonly log: Logger,
  ) {}

  /** Takes one update: enqueued, answered on the spot (a no-op button), or ignored. */
  async receive(received: Update): Promise<void> {
    let update = received;
    if (received.edited_message) {
      // An edit asked again is a new message; its update id keeps it apart from the original.
      if (!reaskEdit(received.edited_message, this.identity.edits, this.log)) return;
      update = { update_id: received.update_id, message: received.edited_message };
    }
    const press = update.callback_query;
    if (press && (press.data === CHOSEN_BUTTON_DATA || !press.message)) {
      await this.api.answerCallbackQuery(press.id).catch((err: unknown) => {
        this.log.debug({ err: loggableError(err) }, "telegram: could not answer a no-op button press");
      });
      return;
    }
    let event;
    try {
      event = await normalizeUpdate(update, this.identity, (doc) => this.reader.read(doc));
    } catch (err) {
      // A malformed update would otherwise stall the bot: it is logged and skipped.
      this.log.error(
        { err: loggableError(err), updateId: update.update_id },
        "telegram: could not read an update; skipped",
      );
      return;
    }
    if (event === null) return;
    if (!event.sender.allowed) {
      // How an operator learns the ids to allow: the log names them.
      this.log.info(
        {
          botId: this.identity.id,
          chatId: event.origin.chatId,
          userId: event.origin.userId,
          room: event.room,
        },
        "telegram: sender not on this bot's allowlist; they get a refusal",
      );
    }
    const fresh = await this.inbox.enqueue(event);
    this.log.debug({ eventId: event.eventId, room: event.room, fresh }, "telegram: update enqueued");
  }
}
