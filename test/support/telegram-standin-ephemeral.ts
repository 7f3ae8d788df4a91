import type { ChatRoom, SharedState } from "./telegram-standin-state.js";
import { BadRequest, parseMarkup, type Json, type StoredMessage } from "./telegram-standin-wire.js";

/**
 * The Bot API stand-in's ephemeral messages (Bot API 10, `ephemeral_message_parameters`):
 * a message in a group that one member sees, and nobody else. Only in groups and
 * supergroups; the receiver must be in the chat; a reply to a button press
 * (`callback_query_id`) must be to that receiver's press in that chat, within 15 s.
 * Telegram answers such a message with `message_id` 0, its `ephemeral_message_id` and
 * `receiver_user`; it is edited and deleted by the ephemeral methods only.
 */

/** How long after a press an ephemeral reply to it may be sent. */
const REPLY_TO_PRESS_MS = 15_000;

/** Sends `message` (built as sendMessage would) as an ephemeral message to its receiver. */
export function sendEphemeral(
  shared: SharedState,
  room: ChatRoom,
  message: StoredMessage,
  p: Json,
): StoredMessage {
  const params = (
    typeof p.ephemeral_message_parameters === "string"
      ? JSON.parse(p.ephemeral_message_parameters)
      : p.ephemeral_message_parameters
  ) as { receiver_user_id?: number; callback_query_id?: string };
  const receiver = Number(params.receiver_user_id);
  if (!Number.isInteger(receiver)) throw new BadRequest("receiver_user_id is empty");
  if (room.chat.type !== "group" && room.chat.type !== "supergroup") {
    throw new BadRequest("ephemeral messages can be sent in groups and supergroups only");
  }
  if (!room.members.has(receiver)) throw new BadRequest("USER_NOT_PARTICIPANT");
  if (params.callback_query_id !== undefined) {
    const press = shared.callbacks.get(String(params.callback_query_id));
    if (
      !press ||
      press.userId !== receiver ||
      press.chatId !== room.chat.id ||
      Date.now() - press.at > REPLY_TO_PRESS_MS
    ) {
      throw new BadRequest("query is too old and response timeout expired or query ID is invalid");
    }
  }
  const id = room.nextEphemeralId++;
  const stored: StoredMessage = {
    ...message,
    message_id: 0,
    ephemeral_message_id: id,
    receiver_user: { id: receiver, is_bot: false, first_name: `User ${receiver}` },
    sent: { ...message.sent!, receiver },
  };
  room.ephemeral.set(id, stored);
  return stored;
}

/** editEphemeralMessageReplyMarkup: the receiver's message, by its ephemeral id. */
export function editEphemeralMarkup(room: ChatRoom | undefined, p: Json): true {
  const message = room?.ephemeral.get(Number(p.ephemeral_message_id));
  if (!message || message.sent?.receiver !== Number(p.receiver_user_id)) {
    throw new BadRequest("message to edit not found");
  }
  const markup = parseMarkup(p.reply_markup);
  if (markup) message.reply_markup = markup;
  else delete message.reply_markup;
  message.sent!.edits++;
  return true;
}

/** deleteEphemeralMessage. */
export function deleteEphemeral(room: ChatRoom | undefined, p: Json): true {
  const message = room?.ephemeral.get(Number(p.ephemeral_message_id));
  if (!message || message.sent?.receiver !== Number(p.receiver_user_id)) {
    throw new BadRequest("message to delete not found");
  }
  room!.ephemeral.delete(Number(p.ephemeral_message_id));
  return true;
}

/** What one member sees of the bot's messages in a chat: everyone's, and the ephemeral ones sent to them. */
export function visibleTo(room: ChatRoom | undefined, userId: number): StoredMessage[] {
  if (!room) return [];
  const shared = [...room.messages.values()].filter((m) => m.sent !== undefined);
  const theirs = [...room.ephemeral.values()].filter((m) => m.sent?.receiver === userId);
  return [...shared, ...theirs].sort((a, b) => (a.sent?.seq ?? 0) - (b.sent?.seq ?? 0));
}
