import type { Origin } from "./origin.js";
import { telegramRoom } from "./room.js";

/**
 * The direct chat of one person with the bot an event came through, as a room key and
 * an origin to answer there; undefined where the platform has none (Matrix rooms are
 * bound one by one, a terminal has one person). Used to ask approvers directly.
 */
export function directChatOf(origin: Origin, senderId: string): { room: string; origin: Origin } | undefined {
  const id = /^tg:(\d+)$/.exec(senderId);
  if (origin.platform !== "telegram" || !id) return undefined;
  const userId = Number(id[1]);
  return {
    room: telegramRoom(origin.botId, userId),
    origin: { platform: "telegram", botId: origin.botId, chatId: userId, chatType: "private", userId },
  };
}

/** The same place as `origin`, as another person acting there (no message or button of theirs). */
export function asSender(origin: Origin, senderId: string): Origin | undefined {
  const id = /^tg:(\d+)$/.exec(senderId);
  if (origin.platform !== "telegram" || !id) return undefined;
  const { messageId: _message, callbackQueryId: _press, ...place } = origin;
  return { ...place, userId: Number(id[1]) };
}
