import type { InboundEvent } from "../../core/event.js";

/**
 * Re-checks a queued event's edge record before it becomes a turn: the adapter let the
 * sender in, and the bindings as configured now still do (`senderAllowed`, one check per
 * platform, reading the event's typed origin). Runs before any session state is read:
 * a refused event leaves no trace.
 */
export function edgeRecheck(
  event: InboundEvent,
  senderAllowed: ((event: InboundEvent) => boolean) | undefined,
): boolean {
  return event.sender.allowed && (senderAllowed?.(event) ?? true);
}
