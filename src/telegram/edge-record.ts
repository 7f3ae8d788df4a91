import type { Chat, Message, Update, User } from "grammy/types";
import type { EditsConfig } from "../core/config.js";
import type { Addressed, Edge } from "../core/event.js";
import type { TelegramOrigin } from "../core/origin.js";
import { telegramRoom } from "../core/room.js";
import { addressedInGroup } from "./bot-mentions.js";
import type { PrivateTopics } from "./private-topics.js";
import { bindingOf, type TelegramBinding } from "./room-binding.js";
import type { PairedCheck } from "../access/rules.js";
import {
  groupBinding,
  telegramAllowed,
  type ChatAliases,
  type TelegramBotConfig,
} from "../access/telegram.js";

/** What the edge knows about the bot an update arrived at. */
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

/**
 * The edge record of one update, decided once and without any I/O, so the adapter can
 * refuse a stranger before it downloads, queues or stores anything; the chat, sender
 * and press are kept for the edge's own replies. Null when the update is not for
 * the bot (another bot, a group message not addressed to it, an unread kind).
 */
export interface TelegramEdge {
  edge: Edge;
  chat: Chat;
  from: User;
  press?: NonNullable<Update["callback_query"]>;
  /** What the room is bound to: a namespace, or a General (lobby), retired topic or unbound group the edge answers itself. */
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

/** The forum topic an edge record came from, so the edge's notice answers there. */
export function topicOf(seen: TelegramEdge): number | undefined {
  const origin = seen.edge.origin;
  return origin.platform === "telegram" ? origin.topicId : undefined;
}

function roomBinding(
  bot: BotIdentity,
  chat: Chat,
  msg: { message_thread_id?: number; is_topic_message?: boolean },
): TelegramBinding {
  return bindingOf(
    bot.config,
    { chat, topicId: threadOf(msg) },
    {
      topicsEnabled: bot.topicsEnabled ?? false,
      ...(bot.aliases ? { aliases: bot.aliases } : {}),
      ...(bot.topics ? { topics: bot.topics } : {}),
    },
  );
}

/** Only topics (forum topics, private-chat topics) are rooms of their own; a reply thread in a plain group is not. */
function threadOf(msg: { message_thread_id?: number; is_topic_message?: boolean }): number | undefined {
  return msg.is_topic_message === true ? msg.message_thread_id : undefined;
}

function edgeRecord(
  bot: BotIdentity,
  chat: Chat,
  from: User,
  msg: { message_id: number; message_thread_id?: number; is_topic_message?: boolean },
  addressed: Addressed,
  callbackQueryId?: string,
): Edge {
  const topicId = threadOf(msg);
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
      allowed: telegramAllowed(bot.config, chat, from.id, {
        aliases: bot.aliases,
        paired: bot.paired,
        press: addressed === "button",
      }),
    },
    addressed,
    origin,
  };
}

/**
 * Why a message is for the bot: a DM; in a group a command, a mention of the bot or a
 * reply to it, or any message when the group is bound with `respond: all`. Undefined
 * when it is not for the bot.
 */
function addressedBy(msg: Message, bot: BotIdentity): Addressed | undefined {
  if (msg.chat.type === "private") return "direct";
  const respondsToAll = groupBinding(bot.config, msg.chat.id, bot.aliases)?.respond === "all";
  return addressedInGroup(msg, bot) ?? (respondsToAll ? "all" : undefined);
}
