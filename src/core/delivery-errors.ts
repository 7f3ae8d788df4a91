import { RoomgateError } from "./errors.js";

/**
 * What a sender throws to tell the scheduler how a delivery attempt ended when it
 * did not succeed: wait (the room gives its worker slot back and resumes later),
 * retry with backoff, give up (dead letter), or stop (the lease is gone).
 */

/** The send must wait `waitMs` (a full rate window, a 429 retry_after): not a failure. */
export class SendDeferredError extends RoomgateError {
  constructor(
    readonly waitMs: number,
    readonly reason: string,
    options: { cause?: unknown } = {},
  ) {
    super(`send deferred ${Math.round(waitMs)} ms: ${reason}`, options);
  }
}

/** A send failed in a way a later attempt may fix (5xx, network): retried with backoff until the deadline. */
export class TransientSendError extends RoomgateError {}

/** A send failed in a way no retry fixes (the bot was blocked, the chat is gone): dead letter at once. */
export class PermanentSendError extends RoomgateError {}

/** The worker no longer holds the room's lease: it must stop before any further side effect. */
export class LeaseLostError extends RoomgateError {
  constructor(readonly room: string) {
    super(`lease of ${room} lost; another worker continues the room`);
  }
}
