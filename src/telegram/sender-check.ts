import type { TelegramConfig } from "../core/config.js";
import type { InboundEvent } from "../core/event.js";
import { isAllowed, isBoundChat } from "./telegram-access.js";
import { botIdFromToken } from "./telegram-bot.js";
import { roomOrigin, TelegramOriginSchema } from "./telegram-origin.js";

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
    if (event.kind === "proactive") {
      // No person: the room itself must still be bound to the event's namespace.
      const room = roomOrigin(event.room);
      const bot = room ? bots.get(room.botId) : undefined;
      return room !== undefined && bot?.namespace === event.namespace && isBoundChat(bot, room.chatId);
    }
    const origin = TelegramOriginSchema.safeParse(event.origin);
    if (!origin.success) return false;
    const { botId, chatId, chatType, userId } = origin.data;
    const bot = bots.get(botId);
    return (
      bot !== undefined &&
      event.sender.id === `tg:${userId}` &&
      bot.namespace === event.namespace &&
      isAllowed(bot, { id: chatId, type: chatType }, userId)
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
