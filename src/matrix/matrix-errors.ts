import { networkReason } from "../core/diagnosis.js";
import { RoomgateError } from "../core/errors.js";

/** A homeserver request failed for good: not worth retrying, or still failing after the retries. */
export class MatrixRequestError extends RoomgateError {
  constructor(
    readonly what: string,
    readonly status: number | undefined,
    options: { cause?: unknown } = {},
  ) {
    // A homeserver nobody could reach is said as such (a DNS failure at start was
    // once reported as a refused message).
    const unreachable = networkReason(options.cause);
    super(
      `Matrix ${what} failed${status === undefined ? "" : ` (HTTP ${status})`}${unreachable ? `: ${unreachable}` : ""}`,
      {
        ...options,
        userText: unreachable
          ? `The Matrix homeserver is not reachable: ${unreachable}.`
          : status === 401
            ? "The Matrix homeserver refused the access token (401): matrix.accessToken needs a valid token."
            : "The Matrix homeserver did not accept a message; the details are in the log.",
      },
    );
  }
}

/** An event given to the Matrix sender is not a Matrix event (its origin is another platform's). */
export class MatrixOriginError extends RoomgateError {}
