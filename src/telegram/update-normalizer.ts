import type { Chat, Message, MessageEntity, Update, User } from "grammy/types";
import type { EditsConfig } from "../core/config.js";
import type { InboundEvent, InboundFile, Sender } from "../core/event.js";
import { telegramRoom } from "../core/room.js";
import type { ChatAliases } from "./chat-migrations.js";
import { groupBinding, isAllowed, type TelegramBotConfig } from "./telegram-access.js";
import { messageRef, type TelegramOrigin } from "./telegram-origin.js";

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
}

/** Reads a document into an inbound file (downloaded text, or the reason it was refused). */
export type ReadDocument = (doc: NonNullable<Message["document"]>) => Promise<InboundFile>;

/** Media that is never taken, with the name a person knows it by. */
const OTHER_MEDIA = [
  ["photo", "Photos"],
  ["voice", "Voice messages"],
  ["audio", "Audio files"],
  ["video", "Videos"],
  ["video_note", "Video messages"],
  ["animation", "Animations"],
  ["sticker", "Stickers"],
] as const;

/**
 * Turns one Telegram update into an inbound event, or null when it is not for the
 * bot: in groups only commands, mentions of the bot and replies to its own messages
 * are taken; every way in carries the allowlist verdict.
 */
export async function normalizeUpdate(
  update: Update,
  bot: BotIdentity,
  readDocument: ReadDocument,
  now: () => number = Date.now,
): Promise<InboundEvent | null> {
  if (update.callback_query) return normalizePress(update, bot, now);
  const msg = update.message;
  if (!msg?.from || msg.from.is_bot) return null;
  const isPrivate = msg.chat.type === "private";
  if (!isPrivate && !respondsToAll(bot, msg.chat.id) && !isAddressed(msg, bot)) return null;
  const common = { ...envelope(update, bot, msg.chat, msg.from, msg, now), ...replyTarget(msg, bot) };
  if (msg.document) return { ...common, kind: "file", file: await readDocument(msg.document) };
  const media = OTHER_MEDIA.find(([field]) => msg[field] !== undefined);
  if (media) return { ...common, kind: "file", file: refusedMedia(msg, media[0], media[1]) };
  if (msg.text === undefined) return null;
  const text = cleanText(msg.text, msg.entities ?? [], bot);
  if (text.trim() === "") return null;
  return { ...common, kind: "message", text };
}

function normalizePress(update: Update, bot: BotIdentity, now: () => number): InboundEvent | null {
  const press = update.callback_query;
  if (!press?.message || press.data === undefined) return null;
  const common = envelope(update, bot, press.message.chat, press.from, press.message, now);
  return {
    ...common,
    kind: "choice",
    token: press.data,
    origin: { ...common.origin, callbackQueryId: press.id },
  };
}

function envelope(
  update: Update,
  bot: BotIdentity,
  chat: Chat,
  from: User,
  msg: { message_id: number; message_thread_id?: number; is_topic_message?: boolean },
  now: () => number,
) {
  // Only forum topics are rooms of their own; a reply thread in a plain group is not.
  const topicId = msg.is_topic_message === true ? msg.message_thread_id : undefined;
  // A migrated group stays the room it was: its key keeps the first id the group had.
  const roomChat = bot.aliases?.original(chat.id) ?? chat.id;
  const origin: TelegramOrigin = {
    botId: bot.id,
    chatId: chat.id,
    messageId: msg.message_id,
    chatType: chat.type,
    userId: from.id,
    ...(topicId === undefined ? {} : { topicId }),
    ...(roomChat === chat.id ? {} : { roomChat }),
  };
  const sender: Sender = {
    id: `tg:${from.id}`,
    name: [from.first_name, from.last_name].filter(Boolean).join(" ") || from.username,
    allowed: isAllowed(bot.config, chat, from.id, bot.aliases),
  };
  return {
    eventId: `tg:${bot.id}:${update.update_id}`,
    room: telegramRoom(bot.id, roomChat, topicId),
    namespace: bot.config.namespace,
    platform: "telegram" as const,
    sender,
    receivedAt: now(),
    origin: origin as Record<string, unknown>,
  };
}

/** A group bound with `respond: all` takes every message, not only those addressed to the bot. */
function respondsToAll(bot: BotIdentity, chatId: number): boolean {
  return groupBinding(bot.config, chatId, bot.aliases)?.respond === "all";
}

/**
 * Who an update is from and where, read without any I/O, so the adapter can refuse a
 * stranger before it downloads, queues or stores anything. Null when the update is not
 * for the bot (another bot, a group message not addressed to it, an unread kind).
 */
export function edgeOf(
  update: Update,
  bot: BotIdentity,
): { chat: Chat; from: User; press?: NonNullable<Update["callback_query"]>; allowed: boolean } | null {
  const press = update.callback_query;
  if (press) {
    if (!press.message) return null;
    return {
      chat: press.message.chat,
      from: press.from,
      press,
      allowed: isAllowed(bot.config, press.message.chat, press.from.id, bot.aliases),
    };
  }
  const msg = update.message;
  if (!msg?.from || msg.from.is_bot) return null;
  if (msg.chat.type !== "private" && !respondsToAll(bot, msg.chat.id) && !isAddressed(msg, bot)) {
    return null;
  }
  return {
    chat: msg.chat,
    from: msg.from,
    allowed: isAllowed(bot.config, msg.chat, msg.from.id, bot.aliases),
  };
}

/** The bot message a message replies to, as a message ref, so a reply chooses from that offer. */
function replyTarget(msg: Message, bot: BotIdentity): { replyTo?: string } {
  const replied = msg.reply_to_message;
  if (!replied || replied.from?.id !== bot.id || replied.forum_topic_created !== undefined) return {};
  return { replyTo: messageRef(msg.chat.id, replied.message_id) };
}

/** A group message is for the bot when it is a command, mentions the bot, or replies to it. */
function isAddressed(msg: Message, bot: BotIdentity): boolean {
  const text = msg.text ?? msg.caption ?? "";
  const entities = msg.entities ?? msg.caption_entities ?? [];
  const replied = msg.reply_to_message;
  // In forums every message "replies" to the topic's creation message; that is no reply to the bot.
  if (replied?.from?.id === bot.id && replied.forum_topic_created === undefined) return true;
  return entities.some((e) => {
    if (e.type === "text_mention") return e.user.id === bot.id;
    const part = slice(text, e);
    if (e.type === "mention") return sameName(part.slice(1), bot.username);
    if (e.type === "bot_command" && e.offset === 0) {
      const target = part.split("@")[1];
      return target === undefined || sameName(target, bot.username);
    }
    return false;
  });
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

function refusedMedia(msg: Message, field: string, what: string): InboundFile {
  const file = msg.photo?.at(-1) ?? msg.video ?? msg.audio ?? msg.voice ?? msg.animation ?? msg.video_note;
  const size = file?.file_size ?? 0;
  return {
    name: field,
    mime: "application/octet-stream",
    size,
    rejected: `${what} are not accepted. Send your message as text, or a text file (Markdown, plain text or CSV).`,
  };
}

function slice(text: string, e: MessageEntity): string {
  return text.slice(e.offset, e.offset + e.length);
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
