import type { TelegramConfig } from "../core/config.js";
import type { InboundEvent } from "../core/event.js";
import { isAllowed } from "./telegram-access.js";
import { botIdFromToken } from "./telegram-bot.js";
import { TelegramOriginSchema } from "./telegram-origin.js";

/**
 * The worker's own check of a queued Telegram event against the bindings as configured
 * now, instead of the `allowed` flag read back from Redis: the event's bot must be bound
 * to the event's namespace and the sender allowed in that chat.
 */
export function telegramSenderCheck(telegram: TelegramConfig): (event: InboundEvent) => boolean {
  const bots = new Map(
    telegram.bots.flatMap((bot) =>
      safeBotId(bot.token) === undefined ? [] : [[safeBotId(bot.token)!, bot]],
    ),
  );
  return (event) => {
    const origin = TelegramOriginSchema.safeParse(event.origin);
    if (!origin.success) return false;
    const { botId, chatId, chatType, userId, roomChat } = origin.data;
    const bot = bots.get(botId);
    // A migrated group is bound by either of its ids: the one it has, or the one its room keeps.
    const boundBy = (id: number) => isAllowed(bot!, { id, type: chatType }, userId);
    return (
      bot !== undefined &&
      event.sender.id === `tg:${userId}` &&
      bot.namespace === event.namespace &&
      (boundBy(chatId) || (roomChat !== undefined && boundBy(roomChat)))
    );
  };
}

function safeBotId(token: string): number | undefined {
  try {
    return botIdFromToken(token);
  } catch {
    return undefined;
  }
}
