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

/**
 * Builds the ref of an ephemeral message (`<chatId>:eph:<receiverId>:<ephemeralId>`):
 * it has no message id, and only its receiver's id and its own address it.
 */
export function ephemeralRef(chatId: number, receiverId: number, ephemeralId: number): string {
  return `${chatId}:eph:${receiverId}:${ephemeralId}`;
}

/** Parses an ephemeral message's ref; null when it is not one. */
export function parseEphemeralRef(
  ref: string,
): { chatId: number; receiverId: number; ephemeralId: number } | null {
  const match = /^(-?\d+):eph:(\d+):(\d+)$/.exec(ref);
  if (!match) return null;
  return { chatId: Number(match[1]), receiverId: Number(match[2]), ephemeralId: Number(match[3]) };
}
