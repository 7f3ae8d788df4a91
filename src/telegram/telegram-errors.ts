import { RoomgateError } from "../core/errors.js";

/** A bot token is not of Telegram's `<bot id>:<secret>` form, so the bot cannot be told apart. */
export class TelegramTokenError extends RoomgateError {}

/** A bot could not start: its token was refused or the Bot API could not be reached. */
export class TelegramStartError extends RoomgateError {}

/** An event handed to the Telegram sender is not a Telegram event (its origin is another platform's). */
export class TelegramOriginError extends RoomgateError {}

/** The sender was asked to answer for a bot that is not configured in this process. */
export class UnknownBotError extends RoomgateError {
  constructor(readonly botId: number) {
    super(`no Telegram bot with id ${botId} is configured`);
  }
}
