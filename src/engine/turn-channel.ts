import type { FileLimits } from "../core/adapter.js";
import { FileFetchError } from "../core/errors.js";
import type { InboundEvent, InboundFile } from "../core/event.js";
import type { ProgressUpdate } from "../core/progress.js";
import type { Reply } from "../core/reply.js";

/**
 * The room's events queued behind a running turn, oldest first, as they come: a
 * running call takes its /cancel or its answers from here (which it took is kept in
 * the session: `taken`), and leaves the others queued for their own turns.
 */
export interface QueuedEvents {
  /** The next event, waiting for one to be queued; undefined once `signal` aborts or `until` (ms) passes. */
  next(signal: AbortSignal, until?: number): Promise<InboundEvent | undefined>;
  /** Stops watching. */
  close(): void;
}

/**
 * What a running turn can do before it ends: show progress, send a reply at once
 * (an elicitation's question), watch the room's events queued behind it (a /cancel, an
 * answer), and fetch a file the person sent from their platform.
 */
export interface TurnChannel {
  progress(update: ProgressUpdate): Promise<void>;
  /** The ref a Stop of this turn's progress carries (see PlatformSender.progressRef), if it can be stopped. */
  readonly progressRef?: string;
  /** Sends a reply now; resolves to the platform refs of its messages. */
  send(reply: Reply): Promise<string[]>;
  /**
   * Watches the events from allowed users queued after this turn's own event (`turn`),
   * or after what is queued now (`now`: the answers to a question about to be asked).
   */
  watch(from: "turn" | "now"): Promise<QueuedEvents>;
  /**
   * Answers another queued event at once: with a short notice (a press that was not
   * theirs to make: a toast), or with none (a press taken as an answer, so that its
   * button stops spinning while the call it answered goes on).
   */
  notify?(event: InboundEvent, text?: string): Promise<void>;
  /** The bytes of a file the person sent that the adapter left on the platform; throws FileFetchError. */
  fetchFile(file: InboundFile, limits: FileLimits): Promise<Uint8Array>;
}

/** Events that never come: `next` waits for its signal or its time. */
const nothingQueued: QueuedEvents = {
  next: (signal, until) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve(undefined);
      const done = () => {
        clearTimeout(timer);
        resolve(undefined);
      };
      const timer = until === undefined ? undefined : setTimeout(done, Math.max(0, until - Date.now()));
      signal.addEventListener("abort", done, { once: true });
    }),
  close: () => undefined,
};

/** A channel for turns run without a live platform (tests of the engine, benchmarks): nothing is sent early, nothing arrives. */
export const quietChannel: TurnChannel = {
  progress: async () => undefined,
  send: async () => [],
  watch: async () => nothingQueued,
  fetchFile: async () => {
    throw new FileFetchError("no platform to fetch the file from", {
      userText: "The file could not be fetched here; please send it again.",
    });
  },
};
