import { z } from "zod";
import type { InboundEvent } from "../core/event.js";

/**
 * What the Telegram adapter records in an event's `origin` so that the sender can
 * answer in the right chat, topic and thread; parsed back at the boundary.
 */
export const TelegramOriginSchema = z.object({
  botId: z.number().int(),
  chatId: z.number().int(),
  /** Forum topic (message_thread_id) the event came from, when it was sent in one. */
  topicId: z.number().int().optional(),
  /** The person's message, or the bot message whose button was pressed. */
  messageId: z.number().int().optional(),
  callbackQueryId: z.string().optional(),
  chatType: z.enum(["private", "group", "supergroup", "channel"]),
  userId: z.number().int(),
});
export type TelegramOrigin = z.infer<typeof TelegramOriginSchema>;

/**
 * The origin of a turn no person started (a schedule, a hook), read from its room key
 * `telegram:<botId>:<chatId>[:<topicId>]`: no message to reply to, no user.
 */
export function roomOrigin(room: string): TelegramOrigin | undefined {
  const match = /^telegram:(\d+):(-?\d+)(?::(\d+))?$/.exec(room);
  if (!match) return undefined;
  const chatId = Number(match[2]);
  return {
    botId: Number(match[1]),
    chatId,
    ...(match[3] === undefined ? {} : { topicId: Number(match[3]) }),
    chatType: chatId > 0 ? "private" : "supergroup",
    userId: 0,
  };
}

/** The origin of an event: what the adapter recorded, or for a proactive turn, its room's. */
export function eventOrigin(event: InboundEvent): TelegramOrigin | undefined {
  if (event.kind === "proactive") return roomOrigin(event.room);
  const parsed = TelegramOriginSchema.safeParse(event.origin);
  return parsed.success ? parsed.data : undefined;
}

/** Builds a Telegram message ref (`<chatId>:<messageId>`), the form the engine stores. */
export function messageRef(chatId: number, messageId: number): string {
  return `${chatId}:${messageId}`;
}

/** Parses a message ref back into chat and message ids; null when it is not a Telegram ref. */
export function parseMessageRef(ref: string): { chatId: number; messageId: number } | null {
  const match = /^(-?\d+):(\d+)$/.exec(ref);
  if (!match) return null;
  return { chatId: Number(match[1]), messageId: Number(match[2]) };
}
