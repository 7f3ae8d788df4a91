import { z } from "zod";

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
  /** The first id of a group that was migrated to a supergroup: the chat its room key names. */
  roomChat: z.number().int().optional(),
});
export type TelegramOrigin = z.infer<typeof TelegramOriginSchema>;

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
