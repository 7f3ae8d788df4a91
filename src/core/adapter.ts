import type { Admission, FloodTicket } from "./admission.js";
import type { Logger } from "./log.js";
import type { InboundEvent, InboundFile } from "./event.js";
import type { Platform } from "./room.js";
import type { ProgressUpdate } from "./progress.js";
import type { TurnOutcome } from "./reply.js";

/** Where adapters put what they receive: de-duplicated by event id, then queued for a worker. */
export interface Inbox {
  /** Queues the event for its room; resolves false when the event id was seen before. */
  enqueue(event: InboundEvent): Promise<boolean>;
  /**
   * De-duplicates, checks the flood limits and queues in one step (one round trip);
   * optional: without it the edge checks the limits first, then enqueues.
   */
  enqueueLimited?(event: InboundEvent, ticket: FloodTicket): Promise<Admission>;
  /** How many events wait in the room's inbox (its running turn's included). */
  queued(room: string): Promise<number>;
}

/**
 * What was already sent for one turn, so a turn retried after a worker died sends
 * each part once: part key → platform message ref.
 */
export interface DeliveryLedger {
  get(partKey: string): Promise<string | null>;
  set(partKey: string, messageRef: string): Promise<void>;
  /**
   * True when an earlier attempt of this part (not yet recorded sent) may have reached
   * the platform: its holder died or lost the room with the request out. A sender whose
   * platform has no idempotent send tells the person when it sends such a part again.
   * Optional: a ledger that never outlives its process has no such attempts.
   */
  unconfirmed?(partKey: string): boolean;
}

/**
 * One send limit: at most `max` sends per `windowMs` in the window `scope` of `group`
 * (one bot or account: the windows a send must fit all share its group, and the
 * scheduler keeps them in one Redis slot).
 */
export interface SendWindow {
  group: string;
  scope: string;
  max: number;
  windowMs: number;
}

/**
 * The scheduler's gate for one turn's sends: every attempt passes it, so limits,
 * 429 waits and the room's lease are checked on Redis' clock before anything is sent.
 */
export interface SendGate {
  /**
   * Takes a slot in every window and marks `partKey` as being sent, fenced by the
   * room's lease. Throws SendDeferredError when the room must wait, LeaseLostError
   * when the lease is gone.
   */
  reserve(windows: SendWindow[], partKey?: string): Promise<void>;
  /**
   * Says that the attempt last reserved was answered (or failed): from then on its
   * slot counts from this moment, when the request had certainly arrived.
   */
  answered(): void;
  /**
   * Says that the platform refused the attempt last reserved (a 429, a 4xx, a connection
   * never made): nothing was sent, so a later attempt of its part is not a resend.
   */
  refused(): void;
  /** Blocks the windows for every process for `ms` (a platform's 429). */
  hold(windows: SendWindow[], ms: number): Promise<void>;
}

/** What a sender gets for one turn besides the outcome itself. */
export interface DeliveryContext {
  /** Stable id of the turn (the inbound event id): idempotency keys derive from it. */
  turnId: string;
  ledger: DeliveryLedger;
  log: Logger;
  /** Present when a worker runs the turn; without it a sender limits and retries in-process. */
  gate?: SendGate;
}

/**
 * The sending half of a platform adapter, used by workers: it renders a turn's
 * outcome for its platform and delivers it within the platform's limits.
 */
export interface PlatformSender {
  readonly platform: Platform;
  /**
   * Delivers the outcome for the event's room and returns the platform refs of the
   * messages that carry the reply (the last one carries the options).
   */
  deliver(event: InboundEvent, outcome: TurnOutcome, context: DeliveryContext): Promise<string[]>;
  /** Shows that a turn is being worked on (typing) until the returned function is called. */
  working(event: InboundEvent): () => void;
  /**
   * Shows a running call's progress in the event's room: one status message per
   * update key, edited in place (throttled as the platform needs), finished on `done`.
   * Optional: a sender without it shows typing only.
   */
  progress?(event: InboundEvent, update: ProgressUpdate): Promise<void>;
  /**
   * The ref a person's Stop of this turn's progress carries (a `stop` event's
   * `progress`), where the platform shows one; undefined where none can be stopped.
   */
  progressRef?(event: InboundEvent): string | undefined;
  /**
   * Fetches a file the adapter left on the platform (`file.ref`), reading no more than
   * `limits.maxBytes` within `limits.timeoutMs`. Optional: without it such files cannot
   * reach a tool. Throws FileFetchError with a line for the person.
   */
  fetchFile?(event: InboundEvent, file: InboundFile, limits: FileLimits): Promise<Uint8Array>;
}

/** The tool that turns a room's voice notes into text, and the namespace that serves it. */
export interface VoiceTool {
  namespace: string;
  tool: string;
}

/** How much of a file the worker may read, and for how long. */
export interface FileLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** The receiving half of a platform adapter: started by `roomgate start`, stopped on SIGTERM. */
export interface Receiver {
  /** How logs and /healthz name it ("telegram", "matrix"). */
  readonly name?: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Why it cannot take updates right now (it cannot queue them), for /healthz; undefined while it can. */
  stuck?(): string | undefined;
}
