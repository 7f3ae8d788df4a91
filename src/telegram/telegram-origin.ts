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
