/** The shape of a Telegram bot token: `<bot id>:<secret>`. */
export const TELEGRAM_TOKEN = /^(\d+):[A-Za-z0-9_-]+$/;

/** The bot id a token names (the part before the colon), or undefined when it is not a token. */
export function botIdPart(token: string): number | undefined {
  const match = TELEGRAM_TOKEN.exec(token);
  return match ? Number(match[1]) : undefined;
}
