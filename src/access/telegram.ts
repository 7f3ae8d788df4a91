import type { TelegramConfig } from "../core/config.js";
import { botIdPart } from "../core/telegram-token.js";
import { telegramBindings, type Binding } from "./bindings.js";
import { mayAsk, mayPress, type PairedCheck } from "./rules.js";

/** One configured bot: its token, namespace and who may talk to it where. */
export type TelegramBotConfig = TelegramConfig["bots"][number];

/** One group a bot is bound in, with its own allowlist. */
export type TelegramGroupConfig = TelegramBotConfig["groups"][number];

/** How a chat id relates to the ids the same chat had or has after a migration. */
export interface ChatAliases {
  /** The first id the chat had: what its room key keeps, so a migrated group stays the same room. */
  original(chatId: number): number;
  /** The id the chat has now, after every migration seen. */
  newest(chatId: number): number;
}

/** No migrations known: every chat is only itself. */
export const NO_ALIASES: ChatAliases = { original: (id) => id, newest: (id) => id };

/** A Telegram chat as access sees it: its id and its type (`private`, `group`, `supergroup`, `channel`). */
export interface TelegramChat {
  id: number;
  type: string;
}

/** A bot's bindings, built once per configured bot: its direct chats', and its groups' by configured chat id. */
interface BotBindings {
  direct: Binding;
  groups: ReadonlyMap<number, Binding>;
}

const built = new WeakMap<TelegramBotConfig, BotBindings>();

function bindingsOf(bot: TelegramBotConfig): BotBindings {
  let found = built.get(bot);
  if (!found) {
    const [direct, ...groups] = telegramBindings(bot, botIdPart(bot.token) ?? 0);
    found = { direct: direct!, groups: new Map(bot.groups.map((g, i) => [g.chat, groups[i]!])) };
    built.set(bot, found);
  }
  return found;
}

/**
 * The group binding a chat falls under: the one naming its id, the id it had before
 * it was migrated to a supergroup, or the id it has since, so a migrated group keeps
 * its binding whichever id the configuration names.
 */
export function groupBinding(
  bot: TelegramBotConfig,
  chatId: number,
  aliases: ChatAliases = NO_ALIASES,
): TelegramGroupConfig | undefined {
  const ids = new Set([chatId, aliases.original(chatId), aliases.newest(chatId)]);
  return bot.groups.find((g) => ids.has(g.chat));
}

/**
 * The binding a sender meets in a chat: a direct chat is the bot's own binding, and only
 * their own chat (its id is theirs); a group is its group's binding, so approving someone
 * for direct chats never opens a group. Undefined for anything else.
 */
export function chatBinding(
  bot: TelegramBotConfig,
  chat: TelegramChat,
  userId: number,
  aliases: ChatAliases = NO_ALIASES,
): Binding | undefined {
  if (chat.type === "private") return chat.id === userId ? bindingsOf(bot).direct : undefined;
  if (chat.type !== "group" && chat.type !== "supergroup") return undefined;
  const group = groupBinding(bot, chat.id, aliases);
  return group && bindingsOf(bot).groups.get(group.chat);
}

/**
 * Deny by default, for the edge and the worker alike: may the user write in the chat
 * (or, for a button `press`, press there — approvers may press approvals where they may
 * not talk), listed or added by pairing.
 */
export function telegramAllowed(
  bot: TelegramBotConfig,
  chat: TelegramChat,
  userId: number,
  how: { aliases?: ChatAliases | undefined; paired?: PairedCheck | undefined; press?: boolean } = {},
): boolean {
  const binding = chatBinding(bot, chat, userId, how.aliases);
  const decide = how.press ? mayPress : mayAsk;
  return decide(binding, `tg:${userId}`, { paired: how.paired });
}

/** The names of a bot's bindings: what a `/pair` sent to the bot may open. */
export function telegramBindingNames(bot: TelegramBotConfig): Set<string> {
  const { direct, groups } = bindingsOf(bot);
  return new Set([direct.name, ...[...groups.values()].map((b) => b.name)]);
}

/**
 * Whether the bot may post into a chat on its own (a schedule, a hook): a direct chat
 * with one of its users, or one of its groups.
 */
export function botMayPost(
  bot: TelegramBotConfig,
  chatId: number,
  aliases: ChatAliases = NO_ALIASES,
): boolean {
  return chatId > 0 ? bot.users.includes(chatId) : groupBinding(bot, chatId, aliases) !== undefined;
}

/**
 * Every namespace a bot may bind a room of this chat to, as configured now: what a
 * worker re-checks a queued event's namespace against (a private topic's namespace
 * is one of the bot's topic entries; the edge read which from Redis).
 */
export function namespacesOf(bot: TelegramBotConfig, chat: TelegramChat, roomChat?: number): Set<string> {
  const names = new Set<string>();
  if (bot.namespace !== undefined) names.add(bot.namespace);
  if (chat.type === "private") {
    for (const t of bot.topics) names.add(t.namespace);
    return names;
  }
  for (const id of [chat.id, roomChat]) {
    const group = id === undefined ? undefined : bot.groups.find((g) => g.chat === id);
    if (!group) continue;
    if (group.namespace !== undefined) names.add(group.namespace);
    for (const ns of Object.values(group.topics)) names.add(ns);
  }
  return names;
}
