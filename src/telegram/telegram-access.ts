import type { TelegramConfig } from "../core/config.js";
import { NO_ALIASES, type ChatAliases } from "./chat-migrations.js";

/** One configured bot: its token, namespace and who may talk to it where. */
export type TelegramBotConfig = TelegramConfig["bots"][number];

/** One group a bot is bound in, with its own allowlist. */
export type TelegramGroupConfig = TelegramBotConfig["groups"][number];

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
 * someone for DMs never opens a group.
 */
export function isAllowed(
  bot: TelegramBotConfig,
  chat: { id: number; type: string },
  userId: number,
  aliases: ChatAliases = NO_ALIASES,
): boolean {
  if (chat.type === "private") return chat.id === userId && bot.users.includes(userId);
  if (chat.type !== "group" && chat.type !== "supergroup") return false;
  const group = groupBinding(bot, chat.id, aliases);
  return group !== undefined && group.users.includes(userId);
}
