import type { InboundEvent } from "../core/event.js";
import type { ProgressUpdate } from "../core/progress.js";
import type { Reply } from "../core/reply.js";

/**
 * What a running turn can do before it ends: show progress, send a reply at once
 * (an elicitation's question), and take the room's next events out of band (a
 * /cancel, an answer) although they are queued behind this very turn.
 */
export interface TurnChannel {
  progress(update: ProgressUpdate): Promise<void>;
  /** Sends a reply now; resolves to the platform refs of its messages. */
  send(reply: Reply): Promise<string[]>;
  /** A mark in the room's stream of new events: `fromTurn` marks this turn's own event, otherwise now. */
  mark(fromTurn: boolean): Promise<string>;
  /** The room's events after a mark, oldest first, without the turn's own event and events already taken. */
  eventsAfter(mark: string): Promise<{ id: string; event: InboundEvent }[]>;
  /** Takes an event out of band: its own turn will do nothing. */
  take(event: InboundEvent): Promise<void>;
  /** True when a running turn already took this event. */
  wasTaken(event: InboundEvent): Promise<boolean>;
}

/** A channel for turns run without a live platform (tests of the engine, benchmarks): nothing is sent early, nothing arrives. */
export const quietChannel: TurnChannel = {
  progress: async () => undefined,
  send: async () => [],
  mark: async () => "0-0",
  eventsAfter: async () => [],
  take: async () => undefined,
  wasTaken: async () => false,
};
