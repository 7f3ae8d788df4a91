import type { TelegramConfig } from "../core/config.js";

/** One configured bot: its token, namespace and who may talk to it where. */
export type TelegramBotConfig = TelegramConfig["bots"][number];

/**
 * Deny by default: a DM is allowed when the user is on the bot's list; a group only
 * when the group is listed and the user is on that group's own list, so approving
 * someone for DMs never opens a group.
 */
export function isAllowed(
  bot: TelegramBotConfig,
  chat: { id: number; type: string },
  userId: number,
): boolean {
  if (chat.type === "private") return chat.id === userId && bot.users.includes(userId);
  if (chat.type !== "group" && chat.type !== "supergroup") return false;
  const group = bot.groups.find((g) => g.chat === chat.id);
  return group !== undefined && group.users.includes(userId);
}

/**
 * Whether the bot may post into a chat on its own (a schedule, a hook): a DM with one
 * of its users, or one of its groups.
 */
export function isBoundChat(bot: TelegramBotConfig, chatId: number): boolean {
  return chatId > 0 ? bot.users.includes(chatId) : bot.groups.some((g) => g.chat === chatId);
}
