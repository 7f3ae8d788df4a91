import type { TelegramConfig } from "../core/config.js";
import { telegramDmBinding, telegramGroupBinding } from "../core/bindings.js";
import { botIdPart } from "../core/telegram-token.js";
import { NO_ALIASES, type ChatAliases } from "./chat-migrations.js";

/** One configured bot: its token, namespace and who may talk to it where. */
export type TelegramBotConfig = TelegramConfig["bots"][number];

/** One group a bot is bound in, with its own allowlist. */
export type TelegramGroupConfig = TelegramBotConfig["groups"][number];

/** Whether `/pair` added a sender (`tg:<id>`) to a binding, by the binding's name. */
export type PairedCheck = (binding: string, senderId: string) => boolean;

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
 * Deny by default: a DM is allowed when the user is on the bot's list; a group only
 * when the group is listed and the user is on that group's own list, so approving
 * someone for DMs never opens a group. Users added by pairing count like listed ones.
 */
export function isAllowed(
  bot: TelegramBotConfig,
  chat: { id: number; type: string },
  userId: number,
  aliases: ChatAliases = NO_ALIASES,
  paired?: PairedCheck,
): boolean {
  const botId = botIdPart(bot.token) ?? 0;
  const sender = `tg:${userId}`;
  if (chat.type === "private") {
    if (chat.id !== userId) return false;
    return bot.users.includes(userId) || (paired?.(telegramDmBinding(bot, botId), sender) ?? false);
  }
  if (chat.type !== "group" && chat.type !== "supergroup") return false;
  const group = groupBinding(bot, chat.id, aliases);
  if (!group) return false;
  return group.users.includes(userId) || (paired?.(telegramGroupBinding(group, botId), sender) ?? false);
}

/**
 * Approvers may press approval buttons without being allowed to talk to the bot: in a
 * group, its own `approvers`; in a direct chat, the approvers of the bot's groups whose
 * approvals go to direct chats (`approvals.where: dm`).
 */
export function approverMayPress(
  bot: TelegramBotConfig,
  chat: { id: number; type: string },
  userId: number,
  aliases: ChatAliases = NO_ALIASES,
): boolean {
  if (chat.type === "private") {
    return (
      chat.id === userId &&
      bot.groups.some((g) => g.approvals?.where === "dm" && (g.approvers ?? []).includes(userId))
    );
  }
  return (groupBinding(bot, chat.id, aliases)?.approvers ?? []).includes(userId);
}

/**
 * Whether the bot may post into a chat on its own (a schedule, a hook): a DM with one
 * of its users, or one of its groups.
 */
export function isBoundChat(
  bot: TelegramBotConfig,
  chatId: number,
  aliases: ChatAliases = NO_ALIASES,
): boolean {
  return chatId > 0 ? bot.users.includes(chatId) : groupBinding(bot, chatId, aliases) !== undefined;
}
