import { z } from "zod";

/** The platforms a room can live on. */
export const PlatformSchema = z.enum(["telegram", "matrix", "shell"]);
export type Platform = z.infer<typeof PlatformSchema>;

/** Room key of a Telegram chat, or of one forum topic in it (DESIGN §1). */
export function telegramRoom(botId: number | string, chatId: number | string, topicId?: number): string {
  return topicId === undefined ? `telegram:${botId}:${chatId}` : `telegram:${botId}:${chatId}:${topicId}`;
}

/** Room key of a Matrix room, or of one thread in it (its root event id): a thread is a room of its own. */
export function matrixRoom(roomId: string, threadRoot?: string): string {
  return threadRoot === undefined ? `matrix:${roomId}` : `matrix:${roomId}:${threadRoot}`;
}

/** Room key of a terminal session. */
export function shellRoom(name: string): string {
  return `shell:${name}`;
}

/** The platform part of a room key. */
export function platformOf(room: string): Platform {
  return PlatformSchema.parse(room.slice(0, room.indexOf(":")));
}
