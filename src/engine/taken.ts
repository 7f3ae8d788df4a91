import type { InboundEvent } from "../core/event.js";
import type { Change } from "./changes.js";

/**
 * The queued events one running call takes out of band (an elicitation's answers, a
 * /cancel), on top of those the session already marks; their own turns will do
 * nothing. `changes()` is what the call returns, so the session records them.
 */
export class TakenEvents {
  private readonly taken: string[] = [];

  constructor(private readonly before: readonly string[]) {}

  /** True when the event was taken by an earlier turn, or earlier in this one. */
  has(event: InboundEvent): boolean {
    return this.before.includes(event.eventId) || this.taken.includes(event.eventId);
  }

  take(event: InboundEvent): void {
    this.taken.push(event.eventId);
  }

  /** The session change recording what was taken (none when nothing was). */
  changes(): Change[] {
    return this.taken.length > 0 ? [{ type: "take", eventIds: [...this.taken] }] : [];
  }
}
