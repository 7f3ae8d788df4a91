import { GrammyError, HttpError } from "grammy";
import { scrubSecrets } from "../core/log.js";

/** What the log gets of a failed Bot API call. */
export interface LoggableError {
  /** The error class; named so that pino's err serializer does not overwrite it. */
  errorClass: string;
  message: string;
  /** Telegram's error_code, when Telegram answered. */
  code?: number;
  stack?: string;
}

/**
 * Reduces an error to scrubbed text before it is logged: grammY's HttpError wraps
 * node-fetch's error, whose message carries the request URL and with it the bot
 * token, and a logger serialises such nested fields as they are.
 */
export function loggableError(err: unknown): LoggableError {
  if (err instanceof GrammyError)
    return { errorClass: "GrammyError", message: err.description, code: err.error_code };
  if (err instanceof HttpError) {
    const inner = err.error instanceof Error ? `: ${err.error.message}` : "";
    return { errorClass: "HttpError", message: scrubSecrets(err.message + inner) };
  }
  if (err instanceof Error) {
    return { errorClass: err.name, message: scrubSecrets(err.message), stack: scrubSecrets(err.stack ?? "") };
  }
  return { errorClass: typeof err, message: scrubSecrets(String(err)) };
}

/** The error to keep as `cause`: as thrown, except that a network error is replaced by its scrubbed text. */
export function safeCause(err: unknown): unknown {
  return err instanceof HttpError ? new Error(loggableError(err).message) : err;
}
