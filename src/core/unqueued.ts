import { RoomgateError } from "./errors.js";

/**
 * What a person whose message could not be queued is told, once per outage: it is not
 * lost (the platform delivers it again until it is queued), only late.
 */
export const UNQUEUED_NOTICE = "I can't take messages right now; yours will be answered when I'm back.";

/**
 * The inbox could not take an event (Redis refused the write or did not answer): the
 * platform's update stays unconfirmed and is tried again. Its message says what Redis said.
 */
export class UnqueuedEventError extends RoomgateError {
  constructor(
    readonly room: string,
    cause: unknown,
  ) {
    super(`could not queue an event of ${room}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}
