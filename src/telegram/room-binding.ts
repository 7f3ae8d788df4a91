import type { TelegramConfig, VoiceConfig } from "../core/config/telegram.js";
import { originOn, type InboundEvent } from "../core/event.js";
import { botIdPart } from "../core/telegram-token.js";
import type { VoiceTool } from "../core/adapter.js";
import type { PrivateTopics, StoredTopic } from "./private-topics.js";
import {
  groupBinding,
  NO_ALIASES,
  type ChatAliases,
  type TelegramBotConfig,
  type TelegramGroupConfig,
} from "../access/telegram.js";

/** One topic a chat's General lists: what it is called and which agent answers in it. */
export interface ListedTopic {
  name: string;
  namespace: string;
  /** The thread, when the topic exists (a forum topic, or a private topic the bot made). */
  threadId?: number;
}

/**
 * What a Telegram room is bound to: a namespace (`agent`); the General of a chat with
 * topics (`lobby`), which lists them; a topic the bot made for a namespace that the
 * configuration no longer has (`retired`); or nothing (`unbound`, a group no binding names).
 */
export type TelegramBinding =
  | { kind: "agent"; namespace: string; voice?: VoiceConfig }
  | { kind: "lobby"; topics: ListedTopic[] }
  | { kind: "retired"; topic: StoredTopic; topics: ListedTopic[] }
  | { kind: "unbound" };

/** Where a room is: its chat, and its topic when it has one. */
export interface RoomPlace {
  chat: { id: number; type: string };
  topicId: number | undefined;
}

/** What the binding is read against besides the bot's configuration. */
export interface BindingContext {
  /** Whether BotFather's topic mode is on for the bot (getMe's `has_topics_enabled`). */
  topicsEnabled: boolean;
  aliases?: ChatAliases;
  /** The private-chat topics the bot made, already loaded for the chat. */
  topics?: PrivateTopics;
}

/**
 * Decides, without I/O, what a room is bound to. A private chat of a bot with `topics`
 * has one room per topic, each bound to its entry's namespace, and a General that lists
 * them; a forum group binds topic ids (`topics: { "11": runs }`); the bot's `namespace`
 * (or the group's own) stays the default for chats and topics without a binding.
 */
export function bindingOf(
  bot: TelegramBotConfig,
  place: RoomPlace,
  context: BindingContext,
): TelegramBinding {
  const { chat, topicId } = place;
  if (chat.type === "private") return privateBinding(bot, chat.id, topicId, context);
  const group = groupBinding(bot, chat.id, context.aliases ?? NO_ALIASES);
  if (!group) return { kind: "unbound" };
  return groupRoomBinding(bot, group, topicId);
}

function privateBinding(
  bot: TelegramBotConfig,
  chatId: number,
  topicId: number | undefined,
  context: BindingContext,
): TelegramBinding {
  const fallback = (): TelegramBinding =>
    bot.namespace !== undefined
      ? agent(bot.namespace, bot.voice)
      : { kind: "lobby", topics: listPrivate(bot, chatId, context.topics) };
  if (bot.topics.length === 0) return fallback();
  if (topicId === undefined) {
    // Without topic mode the chat has no topics: the bot's own namespace answers, if it has one.
    return context.topicsEnabled
      ? { kind: "lobby", topics: listPrivate(bot, chatId, context.topics) }
      : fallback();
  }
  const made = context.topics?.byThread(chatId, topicId);
  if (!made) return fallback();
  const entry = bot.topics.find((t) => t.name === made.name);
  if (!entry) return { kind: "retired", topic: made, topics: listPrivate(bot, chatId, context.topics) };
  return agent(entry.namespace, entry.voice ?? bot.voice);
}

function groupRoomBinding(
  bot: TelegramBotConfig,
  group: TelegramGroupConfig,
  topicId: number | undefined,
): TelegramBinding {
  const voice = group.voice ?? bot.voice;
  const bound = topicId === undefined ? undefined : group.topics[String(topicId)];
  if (bound !== undefined) return agent(bound, voice);
  const namespace = group.namespace ?? bot.namespace;
  if (namespace !== undefined) return agent(namespace, voice);
  const topics = Object.entries(group.topics).map(([id, ns]) => ({
    name: `#${id}`,
    namespace: ns,
    threadId: Number(id),
  }));
  return { kind: "lobby", topics };
}

function listPrivate(bot: TelegramBotConfig, chatId: number, made: PrivateTopics | undefined): ListedTopic[] {
  return bot.topics.map((t) => {
    const threadId = made?.byName(chatId, t.name)?.threadId;
    return { name: t.name, namespace: t.namespace, ...(threadId === undefined ? {} : { threadId }) };
  });
}

function agent(namespace: string, voice: VoiceConfig | undefined): TelegramBinding {
  return { kind: "agent", namespace, ...(voice ? { voice } : {}) };
}

/**
 * The voice tool of a queued event's room, read from the bindings as configured now: a
 * private topic's entry (by the event's namespace), else the group's, else the bot's; its
 * namespace is the one it names, or the one whose prefix the tool name has.
 */
export function telegramVoiceOf(
  telegram: TelegramConfig,
  namespaces: Record<string, { prefix?: string | undefined }>,
): (event: InboundEvent) => VoiceTool | undefined {
  return (event) => {
    const origin = originOn(event, "telegram");
    const bot = origin ? telegram.bots.find((b) => botIdPart(b.token) === origin.botId) : undefined;
    if (!origin || !bot) return undefined;
    let voice: VoiceConfig | undefined;
    if (origin.chatType === "private") {
      const topic =
        origin.topicId === undefined ? undefined : bot.topics.find((t) => t.namespace === event.namespace);
      voice = topic?.voice ?? bot.voice;
    } else {
      const group = bot.groups.find((g) => g.chat === origin.chatId || g.chat === origin.roomChat);
      voice = group?.voice ?? bot.voice;
    }
    if (!voice) return undefined;
    const namespace =
      voice.namespace ??
      Object.entries(namespaces).find(([name, ns]) => {
        const prefix = ns.prefix ?? `${name}.`;
        return prefix !== "" && voice.tool.startsWith(prefix);
      })?.[0];
    return namespace === undefined ? undefined : { namespace, tool: voice.tool };
  };
}
