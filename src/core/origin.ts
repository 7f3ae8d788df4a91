import { z } from "zod";

/**
 * Where on Telegram an event happened, as the sender needs it to answer there (chat,
 * topic, the message or the pressed button's callback query). Plain ids, no grammY types.
 */
export const TelegramOriginSchema = z.object({
  platform: z.literal("telegram"),
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

/** Where in Matrix an event happened: the room, which event the answer replies to, and its thread. */
export const MatrixOriginSchema = z.object({
  platform: z.literal("matrix"),
  roomId: z.string(),
  /** The Matrix id of the inbound event itself. */
  eventId: z.string(),
  /** The event the bot's answer replies to: the question (for a reaction, the question the offer answered). */
  answerTo: z.string(),
  /** Root of the thread the event was in, so the answer stays in it. */
  threadRoot: z.string().optional(),
  /** The event the person's message replied to (e.g. an offer). */
  replyTo: z.string().optional(),
});
export type MatrixOrigin = z.infer<typeof MatrixOriginSchema>;

/** A terminal room needs nothing more than its room key to answer. */
export const ShellOriginSchema = z.object({ platform: z.literal("shell") });
export type ShellOrigin = z.infer<typeof ShellOriginSchema>;

/**
 * What an adapter needs to answer an event on its platform, typed per platform and
 * parsed with the event, so no consumer re-parses an opaque record.
 */
export const OriginSchema = z.discriminatedUnion("platform", [
  TelegramOriginSchema,
  MatrixOriginSchema,
  ShellOriginSchema,
]);
export type Origin = z.infer<typeof OriginSchema>;

/**
 * The origin of a turn no person started (a schedule, a hook), from its room key
 * alone: no message to reply to and no user; a chat with a positive id is a DM.
 */
export function roomOrigin(room: string): Origin | undefined {
  const telegram = /^telegram:(\d+):(-?\d+)(?::(\d+))?$/.exec(room);
  if (telegram) {
    const chatId = Number(telegram[2]);
    return {
      platform: "telegram",
      botId: Number(telegram[1]),
      chatId,
      ...(telegram[3] === undefined ? {} : { topicId: Number(telegram[3]) }),
      chatType: chatId > 0 ? "private" : "supergroup",
      userId: 0,
    };
  }
  if (room.startsWith("matrix:!")) {
    return { platform: "matrix", roomId: room.slice("matrix:".length), eventId: "", answerTo: "" };
  }
  if (room.startsWith("shell:")) return { platform: "shell" };
  return undefined;
}
