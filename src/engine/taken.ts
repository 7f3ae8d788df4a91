import type { InboundEvent } from "../core/event.js";
import type { Turn } from "./turn.js";

/** How many taken event ids a session keeps: far more than can queue behind one turn. */
const MAX_TAKEN = 50;

/** Takes a queued event out of band: recorded in the session, so its own turn does nothing. */
export function take(turn: Turn, event: InboundEvent): void {
  turn.session.taken = [...turn.session.taken, event.eventId].slice(-MAX_TAKEN);
}

/** True when the event was taken by an earlier turn (or earlier in this one). */
export function wasTaken(turn: Turn, event: InboundEvent): boolean {
  return turn.session.taken.includes(event.eventId);
}

/** A turn whose event was taken: the mark is dropped and nothing else happens. */
export function forgetTaken(turn: Turn, event: InboundEvent): void {
  turn.session.taken = turn.session.taken.filter((id) => id !== event.eventId);
}
