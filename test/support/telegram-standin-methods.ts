import {
  chatRoom,
  knownChat,
  type BotState,
  type ChatRoom,
  type SharedState,
} from "./telegram-standin-state.js";
import { deleteEphemeral, editEphemeralMarkup, sendEphemeral } from "./telegram-standin-ephemeral.js";
import {
  checkReachable,
  checkThread,
  createForumTopic,
  endDrafts,
  sendMessageDraft,
} from "./telegram-standin-surfaces.js";
import { deliverByWebhook } from "./telegram-standin-updates.js";
import {
  BadRequest,
  botUser,
  conflict,
  notModified,
  parseMarkup,
  parseText,
  stripBookkeeping,
  type Json,
  type StoredMessage,
  type UploadedFile,
} from "./telegram-standin-wire.js";

/**
 * The Bot API methods the stand-in answers (all but getUpdates): each takes the
 * calling bot's state and the call's parameters, returns the result or throws BadRequest.
 */

/** One Bot API method: the result for a call, or a BadRequest thrown. */
export type MethodHandler = (state: BotState, p: Json) => unknown;

/** The method table of one stand-in, by method name. */
export function standinMethods(shared: SharedState): Record<string, MethodHandler> {
  return {
    getMe: (state) => ({
      ...botUser(state.bot),
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      has_topics_enabled: state.topicsEnabled,
      allows_users_to_create_topics: false,
    }),
    sendMessage: (state, p) => stripBookkeeping(sendMessage(shared, state, p)),
    sendPhoto: (state, p) => stripBookkeeping(sendUpload(state, p, "photo", PHOTO_MAX_BYTES)),
    sendDocument: (state, p) => stripBookkeeping(sendUpload(state, p, "document", DOCUMENT_MAX_BYTES)),
    editMessageReplyMarkup: (state, p) => {
      const message = editable(state, p);
      const markup = parseMarkup(p.reply_markup);
      if (JSON.stringify(markup) === JSON.stringify(message.reply_markup)) throw notModified();
      if (markup) message.reply_markup = markup;
      else delete message.reply_markup;
      message.sent!.edits++;
      return stripBookkeeping(message);
    },
    editMessageText: (state, p) => {
      const message = editable(state, p);
      const { text, entities } = parseText(p);
      const markup = parseMarkup(p.reply_markup);
      if (text === message.text && JSON.stringify(markup) === JSON.stringify(message.reply_markup))
        throw notModified();
      Object.assign(message, { text, entities });
      if (markup) message.reply_markup = markup;
      else delete message.reply_markup;
      message.sent!.edits++;
      message.sent!.editTimes = [...(message.sent!.editTimes ?? []), Date.now()];
      return stripBookkeeping(message);
    },
    answerCallbackQuery: (state, p) => {
      const query = shared.callbacks.get(String(p.callback_query_id));
      if (!query || query.botId !== state.bot.id || query.answered) {
        throw new BadRequest("query is too old and response timeout expired or query ID is invalid");
      }
      query.answered = true;
      query.answer = { text: p.text, show_alert: p.show_alert };
      return true;
    },
    sendChatAction: (state, p) => {
      if (p.chat_id === undefined || typeof p.action !== "string") throw new BadRequest("chat_id is empty");
      // Telegram answers True for a deleted topic here (tdlib/telegram-bot-api#732): no thread check.
      checkReachable(state.chats.get(Number(p.chat_id)));
      return true;
    },
    sendMessageDraft: (state, p) => sendMessageDraft(state, roomOf(state, p), p),
    editEphemeralMessageReplyMarkup: (state, p) => editEphemeralMarkup(state.chats.get(Number(p.chat_id)), p),
    deleteEphemeralMessage: (state, p) => deleteEphemeral(state.chats.get(Number(p.chat_id)), p),
    createForumTopic: (state, p) => createForumTopic(state, roomOf(state, p), p),
    setMyCommands: (state, p) => {
      const commands = p.commands as { command: string; description: string }[];
      if (!commands.every((c) => /^[a-z0-9_]{1,32}$/.test(c.command) && c.description.length <= 256)) {
        throw new BadRequest("BOT_COMMAND_INVALID");
      }
      state.commands = commands;
      return true;
    },
    getMyCommands: (state) => state.commands,
    leaveChat: (_state, p) => {
      if (p.chat_id === undefined) throw new BadRequest("chat_id is empty");
      return true;
    },
    deleteWebhook: (state, p) => {
      state.webhook = undefined;
      if (p.drop_pending_updates === true) state.updates = [];
      return true;
    },
    setWebhook: (state, p) => {
      state.webhook = { url: String(p.url), secret: p.secret_token as string | undefined };
      state.poll?.answer(409, conflict("terminated by setWebhook request"));
      for (const update of state.updates) deliverByWebhook(state, update, shared.webhookDeliveries);
      return true;
    },
    getWebhookInfo: (state) => ({
      url: state.webhook?.url ?? "",
      has_custom_certificate: false,
      pending_update_count: state.updates.length,
      ...(state.webhook?.lastError
        ? {
            last_error_date: state.webhook.lastError.date,
            last_error_message: state.webhook.lastError.message,
          }
        : {}),
    }),
    getFile: (_state, p) => {
      const file = shared.files.get(String(p.file_id));
      if (!file) throw new BadRequest("invalid file_id");
      // The Bot API serves files up to 20 MB; getFile refuses larger ones.
      if (file.content.byteLength > DOWNLOAD_MAX_BYTES) throw new BadRequest("file is too big");
      return { ...file.doc, file_path: file.path };
    },
  };
}

/** The order of the bot's sends, across chats and stand-ins. */
let sends = 0;

/** The Bot API's download limit for getFile. */
const DOWNLOAD_MAX_BYTES = 20 * 1024 * 1024;

/** The room a call addresses by `chat_id`. */
function roomOf(state: BotState, p: Json): ChatRoom {
  const chatId = Number(p.chat_id);
  if (p.chat_id === undefined || !Number.isFinite(chatId)) throw new BadRequest("chat_id is empty");
  return chatRoom(state, knownChat(state, chatId));
}

function sendMessage(shared: SharedState, state: BotState, p: Json): StoredMessage {
  const chatId = Number(p.chat_id);
  if (!Number.isFinite(chatId)) throw new BadRequest("chat_id is empty");
  const { text, entities } = parseText(p);
  const markup = parseMarkup(p.reply_markup);
  const room = chatRoom(state, knownChat(state, chatId));
  checkReachable(room);
  const threadId = checkThread(state, room, p);
  const replyTo = p.reply_parameters as
    { message_id?: number; allow_sending_without_reply?: boolean } | undefined;
  if (
    replyTo?.message_id !== undefined &&
    !room.messages.has(replyTo.message_id) &&
    !replyTo.allow_sending_without_reply
  ) {
    throw new BadRequest("message to be replied not found");
  }
  if (shared.perChatRate) {
    const last = state.lastSendAt.get(chatId);
    const now = Date.now();
    // A little slack for the event loop: the limiter spaces sends by a full second.
    if (last !== undefined && now - last < 700) {
      shared.rateViolations.push({ chatId, gapMs: now - last });
      throw new BadRequest("Too Many Requests: retry after 1", 429, 1);
    }
    state.lastSendAt.set(chatId, now);
  }
  const ephemeral = p.ephemeral_message_parameters !== undefined;
  const message: StoredMessage = {
    message_id: ephemeral ? 0 : room.nextId++,
    from: botUser(state.bot),
    chat: room.chat,
    date: Math.floor(Date.now() / 1000),
    text,
    ...(entities.length > 0 ? { entities } : {}),
    ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
    ...(markup ? { reply_markup: markup } : {}),
    sent: {
      ...(typeof p.text === "string" ? { html: p.text } : {}),
      ...(typeof p.parse_mode === "string" ? { parse_mode: p.parse_mode } : {}),
      ...(p.link_preview_options ? { link_preview_options: p.link_preview_options as Json } : {}),
      ...(replyTo?.message_id !== undefined ? { reply_to: replyTo.message_id } : {}),
      edits: 0,
      seq: (sends += 1),
    },
  };
  if (ephemeral) return sendEphemeral(shared, room, message, p);
  room.messages.set(message.message_id, message);
  endDrafts(room, threadId);
  return message;
}

function editable(state: BotState, p: Json): StoredMessage {
  checkReachable(state.chats.get(Number(p.chat_id)));
  const message = state.chats.get(Number(p.chat_id))?.messages.get(Number(p.message_id));
  if (!message) throw new BadRequest("message to edit not found");
  if (!message.sent) throw new BadRequest("message can't be edited");
  return message;
}

/** The Bot API's upload limits for photos and other files. */
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
const DOCUMENT_MAX_BYTES = 50 * 1024 * 1024;

/** sendPhoto / sendDocument with a multipart upload: the file must be there and within the limit. */
function sendUpload(state: BotState, p: Json, field: "photo" | "document", maxBytes: number): StoredMessage {
  const chatId = Number(p.chat_id);
  if (!Number.isFinite(chatId)) throw new BadRequest("chat_id is empty");
  // grammY names an uploaded file by reference: `photo: "attach://<part>"`, the bytes in that part.
  const ref = p[field];
  const file = (typeof ref === "string" && ref.startsWith("attach://") ? p[ref.slice(9)] : ref) as
    UploadedFile | string | undefined;
  if (file === undefined || typeof file === "string")
    throw new BadRequest(`there is no ${field} in the request`);
  if (file.size === 0) throw new BadRequest("file must be non-empty");
  if (file.size > maxBytes) throw new BadRequest("Request Entity Too Large", 413);
  const room = chatRoom(state, knownChat(state, chatId));
  checkReachable(room);
  const threadId = checkThread(state, room, p);
  const message: StoredMessage = {
    message_id: room.nextId++,
    from: botUser(state.bot),
    chat: room.chat,
    date: Math.floor(Date.now() / 1000),
    ...(threadId !== undefined ? { message_thread_id: threadId, is_topic_message: true } : {}),
    sent: {
      edits: 0,
      upload: { method: field, name: file.name, size: file.size, content: file.content },
      seq: (sends += 1),
    },
  };
  room.messages.set(message.message_id, message);
  endDrafts(room, threadId);
  return message;
}
