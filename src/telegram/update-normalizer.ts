import type { Chat, Message, MessageEntity, Update, User } from "grammy/types";
import type { EditsConfig } from "../core/config.js";
import type { Addressed, Edge, InboundEvent, InboundFile } from "../core/event.js";
import type { TelegramOrigin } from "../core/origin.js";
import { telegramRoom } from "../core/room.js";
import { OTHER_MEDIA, refusedMedia, takenMedia } from "./media-files.js";
import type { ChatAliases } from "./chat-migrations.js";
import type { PrivateTopics } from "./private-topics.js";
import { bindingOf, type TelegramBinding } from "./room-binding.js";
import {
  approverMayPress,
  groupBinding,
  isAllowed,
  type PairedCheck,
  type TelegramBotConfig,
} from "./telegram-access.js";
import { messageRef } from "./telegram-origin.js";

/** What the normaliser knows about the bot an update arrived at. */
export interface BotIdentity {
  id: number;
  /** The bot's username without the `@`. */
  username: string;
  config: TelegramBotConfig;
  /** What edited messages do (default: logged, not asked again). */
  edits?: EditsConfig;
  /** The ids migrated groups had and have, so that such a group keeps its room and binding. */
  aliases?: ChatAliases;
  /** Users `/pair` added to the bot's bindings. */
  paired?: PairedCheck;
  /** Whether BotFather's topic mode is on (getMe's `has_topics_enabled`): private chats then have topics. */
  topicsEnabled?: boolean;
  /** The private-chat topics the bot made, loaded for the update's chat before `edgeOf`. */
  topics?: PrivateTopics;
  /** The largest file taken (`limits.maxFileBytes`); larger photos and voice notes are refused here. */
  maxFileBytes?: number;
}

/** limits.maxFileBytes' default, for an identity built without the configuration. */
const DEFAULT_MAX_FILE_BYTES = 1_000_000;

/** Reads a document into an inbound file (downloaded text, or the reason it was refused). */
export type ReadDocument = (doc: NonNullable<Message["document"]>) => Promise<InboundFile>;

/**
 * The edge record of one update, decided once and without any I/O, so the adapter can
 * refuse a stranger before it downloads, queues or stores anything; the chat, sender
 * and press are kept for the intake's own replies. Null when the update is not for
 * the bot (another bot, a group message not addressed to it, an unread kind).
 */
export interface TelegramEdge {
  edge: Edge;
  chat: Chat;
  from: User;
  press?: NonNullable<Update["callback_query"]>;
  /** What the room is bound to: a namespace, or a General (lobby), retired topic or unbound group the intake answers itself. */
  binding: TelegramBinding;
}

/** Decides the edge record of an update (see TelegramEdge); null when it is not for the bot. */
export function edgeOf(update: Update, bot: BotIdentity): TelegramEdge | null {
  const press = update.callback_query;
  if (press) {
    if (!press.message) return null;
    const { chat } = press.message;
    return {
      edge: edgeRecord(bot, chat, press.from, press.message, "button", press.id),
      chat,
      from: press.from,
      press,
      binding: roomBinding(bot, chat, press.message),
    };
  }
  const msg = update.message;
  if (!msg?.from || msg.from.is_bot) return null;
  const addressed = addressedBy(msg, bot);
  if (addressed === undefined) return null;
  return {
    edge: edgeRecord(bot, msg.chat, msg.from, msg, addressed),
    chat: msg.chat,
    from: msg.from,
    binding: roomBinding(bot, msg.chat, msg),
  };
}

function roomBinding(
  bot: BotIdentity,
  chat: Chat,
  msg: { message_thread_id?: number; is_topic_message?: boolean },
): TelegramBinding {
  return bindingOf(
    bot.config,
    { chat, topicId: topicOf(msg) },
    {
      topicsEnabled: bot.topicsEnabled ?? false,
      ...(bot.aliases ? { aliases: bot.aliases } : {}),
      ...(bot.topics ? { topics: bot.topics } : {}),
    },
  );
}

/** Only topics (forum topics, private-chat topics) are rooms of their own; a reply thread in a plain group is not. */
function topicOf(msg: { message_thread_id?: number; is_topic_message?: boolean }): number | undefined {
  return msg.is_topic_message === true ? msg.message_thread_id : undefined;
}

/**
 * Turns one update, whose edge record `seen` was decided by `edgeOf`, into an inbound
 * event, or null when there is nothing to take (no text, only the bot's name). A
 * document is read here; nothing at the edge is decided again.
 */
export async function normalizeUpdate(
  update: Update,
  seen: TelegramEdge,
  bot: BotIdentity,
  readDocument: ReadDocument,
  now: () => number = Date.now,
): Promise<InboundEvent | null> {
  const { binding } = seen;
  // Only a room bound to a namespace becomes an event; the intake answers the others itself.
  if (binding.kind !== "agent") return null;
  const common = {
    eventId: `tg:${bot.id}:${update.update_id}`,
    namespace: binding.namespace,
    platform: "telegram" as const,
    receivedAt: now(),
    ...seen.edge,
  };
  const press = update.callback_query;
  if (press) {
    if (press.data === undefined) return null;
    return { ...common, kind: "choice", token: press.data };
  }
  const msg = update.message;
  if (!msg) return null;
  const placed = { ...common, ...replyTarget(msg, bot) };
  const caption = captionOf(msg, bot);
  if (msg.document) {
    return { ...placed, kind: "file", file: { ...(await readDocument(msg.document)), ...caption } };
  }
  const taken = takenMedia(msg, bot.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
  if (taken) return { ...placed, kind: "file", file: { ...taken, ...caption } };
  const media = OTHER_MEDIA.find(([field]) => msg[field] !== undefined);
  if (media) return { ...placed, kind: "file", file: refusedMedia(msg, media[0], media[1]) };
  if (msg.text === undefined) return null;
  const text = cleanText(msg.text, msg.entities ?? [], bot);
  if (text.trim() === "") return null;
  return { ...placed, kind: "message", text };
}

function edgeRecord(
  bot: BotIdentity,
  chat: Chat,
  from: User,
  msg: { message_id: number; message_thread_id?: number; is_topic_message?: boolean },
  addressed: Addressed,
  callbackQueryId?: string,
): Edge {
  const topicId = topicOf(msg);
  // A migrated group stays the room it was: its key keeps the first id the group had.
  const roomChat = bot.aliases?.original(chat.id) ?? chat.id;
  const origin: TelegramOrigin = {
    platform: "telegram",
    botId: bot.id,
    chatId: chat.id,
    messageId: msg.message_id,
    chatType: chat.type,
    userId: from.id,
    ...(topicId === undefined ? {} : { topicId }),
    ...(callbackQueryId === undefined ? {} : { callbackQueryId }),
    ...(roomChat === chat.id ? {} : { roomChat }),
  };
  return {
    room: telegramRoom(bot.id, roomChat, topicId),
    ...(topicId === undefined ? {} : { topic: String(topicId) }),
    sender: {
      id: `tg:${from.id}`,
      name: [from.first_name, from.last_name].filter(Boolean).join(" ") || from.username,
      allowed:
        isAllowed(bot.config, chat, from.id, bot.aliases, bot.paired) ||
        (addressed === "button" && approverMayPress(bot.config, chat, from.id, bot.aliases)),
    },
    addressed,
    origin,
  };
}

/** A group bound with `respond: all` takes every message, not only those addressed to the bot. */
function respondsToAll(bot: BotIdentity, chatId: number): boolean {
  return groupBinding(bot.config, chatId, bot.aliases)?.respond === "all";
}

/**
 * Why a message is for the bot: a DM; in a group a command, a mention of the bot or a
 * reply to it, or any message when the group is bound with `respond: all`. Undefined
 * when it is not for the bot.
 */
function addressedBy(msg: Message, bot: BotIdentity): Addressed | undefined {
  if (msg.chat.type === "private") return "direct";
  return addressedInGroup(msg, bot) ?? (respondsToAll(bot, msg.chat.id) ? "all" : undefined);
}

/** The bot message a message replies to, as a message ref, so a reply chooses from that offer. */
function replyTarget(msg: Message, bot: BotIdentity): { replyTo?: string } {
  const replied = msg.reply_to_message;
  if (!replied || replied.from?.id !== bot.id || replied.forum_topic_created !== undefined) return {};
  return { replyTo: messageRef(msg.chat.id, replied.message_id) };
}

/** How a group message addresses the bot: a reply to it, a mention of it, or a command (to it or to no bot). */
function addressedInGroup(msg: Message, bot: BotIdentity): Addressed | undefined {
  const text = msg.text ?? msg.caption ?? "";
  const entities = msg.entities ?? msg.caption_entities ?? [];
  const replied = msg.reply_to_message;
  // In forums every message "replies" to the topic's creation message; that is no reply to the bot.
  if (replied?.from?.id === bot.id && replied.forum_topic_created === undefined) return "reply";
  for (const e of entities) {
    if (e.type === "text_mention" && e.user.id === bot.id) return "mention";
    const part = slice(text, e);
    if (e.type === "mention" && sameName(part.slice(1), bot.username)) return "mention";
    if (e.type === "bot_command" && e.offset === 0) {
      const target = part.split("@")[1];
      if (target === undefined || sameName(target, bot.username)) return "command";
    }
  }
  return undefined;
}

/**
 * Removes the bot's own name: `/cmd@bot` becomes `/cmd`, a leading or inline `@bot` goes,
 * with the separator left at the start by a leading mention. Nothing else is changed: the
 * person's text reaches the namespace as they sent it.
 */
function cleanText(text: string, entities: MessageEntity[], bot: BotIdentity): string {
  let out = text;
  let leadingMention = false;
  // Right to left, so that earlier offsets stay valid (they are UTF-16, like JS strings).
  for (const e of [...entities].sort((a, b) => b.offset - a.offset)) {
    const part = slice(text, e);
    if (e.type === "bot_command" && e.offset === 0 && part.includes("@")) {
      out = part.split("@")[0] + out.slice(e.length);
    } else if (e.type === "mention" && sameName(part.slice(1), bot.username)) {
      out = out.slice(0, e.offset) + out.slice(e.offset + e.length).replace(/^ /, "");
      if (text.slice(0, e.offset).trim() === "") leadingMention = true;
    }
  }
  return leadingMention ? out.replace(/^[\s,:]+/, "") : out;
}

/** The text sent with a file, the bot's name removed as from a message: the question that goes with it. */
function captionOf(msg: Message, bot: BotIdentity): { caption?: string } {
  if (msg.caption === undefined) return {};
  const caption = cleanText(msg.caption, msg.caption_entities ?? [], bot).trim();
  return caption === "" ? {} : { caption };
}

function slice(text: string, e: MessageEntity): string {
  return text.slice(e.offset, e.offset + e.length);
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
