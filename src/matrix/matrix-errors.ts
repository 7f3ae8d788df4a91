import { RoomgateError } from "../core/errors.js";

/** A homeserver request failed for good: not worth retrying, or still failing after the retries. */
export class MatrixRequestError extends RoomgateError {
  constructor(
    readonly what: string,
    readonly status: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    super(`Matrix ${what} failed${status === undefined ? "" : ` (HTTP ${status})`}`, {
      ...options,
      userText: "The Matrix homeserver did not accept a message; the details are in the log.",
    });
  }
}

/** An event given to the Matrix sender is not a Matrix event (its origin is another platform's). */
export class MatrixOriginError extends RoomgateError {}
