import type { TelegramConfig } from "../core/config.js";
import { originOn, type InboundEvent } from "../core/event.js";
import { botIdPart } from "../core/telegram-token.js";
import { NO_ALIASES } from "./chat-migrations.js";
import { namespacesOf } from "./room-binding.js";
import { approverMayPress, isAllowed, isBoundChat, type PairedCheck } from "./telegram-access.js";

/**
 * The worker's own check of a queued Telegram event against the bindings as configured
 * now, instead of the `allowed` flag read back from Redis: the event's bot must bind a
 * room of that chat to the event's namespace (its own, a topic's or the group's) and the
 * sender must be allowed in that chat.
 */
export function telegramSenderCheck(
  telegram: TelegramConfig,
  paired?: PairedCheck,
): (event: InboundEvent) => boolean {
  const bots = new Map(
    telegram.bots.flatMap((bot) => {
      const id = botIdPart(bot.token);
      return id === undefined ? [] : [[id, bot] as const];
    }),
  );
  return (event) => {
    const origin = originOn(event, "telegram");
    if (!origin) return false;
    const { botId, chatId, chatType, userId, roomChat } = origin;
    const bot = bots.get(botId);
    if (bot === undefined) return false;
    // No person: the chat itself must still be one the bot may post into, for this namespace.
    const bound = namespacesOf(bot, { id: chatId, type: chatType }, roomChat).has(event.namespace);
    if (event.kind === "proactive") return bound && isBoundChat(bot, chatId);
    // A migrated group is bound by either of its ids: the one it has, or the one its room keeps.
    // Approvers may press approval buttons where they are not allowed to talk (approverMayPress).
    const presses = event.kind === "choice" || event.kind === "approval";
    const boundBy = (id: number) =>
      isAllowed(bot, { id, type: chatType }, userId, NO_ALIASES, paired) ||
      (presses && approverMayPress(bot, { id, type: chatType }, userId));
    return (
      event.sender.id === `tg:${userId}` &&
      bound &&
      (boundBy(chatId) || (roomChat !== undefined && boundBy(roomChat)))
    );
  };
}
