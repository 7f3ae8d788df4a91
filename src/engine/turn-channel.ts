import type { FileLimits } from "../core/adapter.js";
import { FileFetchError } from "../core/errors.js";
import type { InboundEvent, InboundFile } from "../core/event.js";
import type { ProgressUpdate } from "../core/progress.js";
import type { Reply } from "../core/reply.js";

/**
 * What a running turn can do before it ends: show progress, send a reply at once
 * (an elicitation's question), read the room's events queued behind it (a /cancel, an
 * answer), and fetch a file the person sent from their platform. Which of those it takes is kept in the session (`taken`).
 */
export interface TurnChannel {
  progress(update: ProgressUpdate): Promise<void>;
  /** Sends a reply now; resolves to the platform refs of its messages. */
  send(reply: Reply): Promise<string[]>;
  /** A position in the room's queue: after this turn's own event (`fromTurn`), otherwise after what is queued now. */
  mark(fromTurn: boolean): Promise<number>;
  /** Events from allowed users queued at or after a position, oldest first, each with the position after it. */
  eventsAfter(mark: number): Promise<{ next: number; event: InboundEvent }[]>;
  /** Answers another queued event at once with a short notice (a press that was not theirs to make: a toast). */
  notify?(event: InboundEvent, text: string): Promise<void>;
  /** The bytes of a file the person sent that the adapter left on the platform; throws FileFetchError. */
  fetchFile(file: InboundFile, limits: FileLimits): Promise<Uint8Array>;
}

/** A channel for turns run without a live platform (tests of the engine, benchmarks): nothing is sent early, nothing arrives. */
export const quietChannel: TurnChannel = {
  progress: async () => undefined,
  send: async () => [],
  mark: async () => 0,
  eventsAfter: async () => [],
  fetchFile: async () => {
    throw new FileFetchError("no platform to fetch the file from", {
      userText: "The file could not be fetched here; please send it again.",
    });
  },
};
