import type { InboundEvent } from "../core/event.js";
import type { KeptSession } from "./turn-commit.js";

/** What the claim (or the previous turn's finish) read for the room's head turn. */
export interface TurnInput {
  head: string;
  /** The session as stored, when it was read (a claim); the holder's own is `kept`. */
  session: string | null;
  /** The head turn's record (field → value). */
  record: Record<string, string>;
  history?: string[];
  /** Redis' clock when it was read (ms), to tell how long the turn has waited. */
  now?: number;
  /** The session this holder committed last, when it has held the room since. */
  kept?: KeptSession;
}

/**
 * Events this process queued lately, by their inbox entry as written: a turn of one
 * of them takes the event as it was built instead of parsing it again.
 */
export type RecentEvents = (entry: string) => InboundEvent | undefined;

/** What one turn left: the room's next turn when the worker keeps it, or when a parked room resumes. */
export interface TurnResult {
  next?: TurnInput;
  resumeInMs?: number;
}

/** Scheduling settings of the turn runner. */
export interface TurnRunnerSettings {
  /** A turn still waiting this long after its first wait goes to the dead letters. */
  deadlineMs: number;
  /** The longest backoff between delivery retries. */
  retryMaxMs: number;
  /** The typing indicator starts only when a turn runs longer than this. */
  typingAfterMs: number;
  idleSeconds: number;
  /**
   * A turn whose computation was cut short by its process dying this many times goes
   * to the dead letters instead of being computed again (it may be what kills it).
   */
  maxComputeDeaths: number;
}

/**
 * Tells whether a namespace's tools take the history, so it is read only then;
 * `cachedOnly` answers from the last look without reaching the namespace.
 */
export type HistoryWanted = (namespace: string, cachedOnly?: boolean) => Promise<boolean>;

/** How long the head turn has waited since its first wait (Redis' clock), ms; 0 when it has not waited. */
export function waitedOf(input: TurnInput, record: Record<string, string>): number {
  return record.since && input.now !== undefined ? input.now - Number(record.since) : 0;
}

/** The head turn's record, or an empty one when it belongs to another event. */
export function recordOf(record: Record<string, string>, eventId: string): Record<string, string> {
  return record.id === undefined || record.id === eventId ? record : {};
}
