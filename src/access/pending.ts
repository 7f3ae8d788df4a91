import type { InboundEvent } from "../core/event.js";

/** A person pending state was asked of: their sender id, and their name when known. */
export interface Person {
  id: string;
  name?: string;
}

/** The person an event is from, as pending state records them. */
export function personOf(event: InboundEvent): Person {
  return { id: event.sender.id, ...(event.sender.name ? { name: event.sender.name } : {}) };
}

/**
 * Who pending state a turn makes is asked of: its person, or nobody in particular for a
 * turn no person started (a schedule's fire, a webhook), whose offers are the room's.
 */
export function askerOf(event: InboundEvent): Person | undefined {
  return event.kind === "proactive" ? undefined : personOf(event);
}

/**
 * Inside a room, what was asked of one person is answered by that person (DESIGN §9):
 * a pending argument, an offer, an approval asked of its requester, an elicitation, a
 * `/cancel`. Pending state asked of nobody in particular (`askedOf` undefined) is the
 * room's.
 */
export function askedOfSender(askedOf: Person | undefined, senderId: string): boolean {
  return askedOf === undefined || askedOf.id === senderId;
}
