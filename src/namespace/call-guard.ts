import type { Logger } from "../core/log.js";
import type { CallProgress } from "./call-options.js";
import type { ElicitHandler } from "./elicitation-router.js";
import { NamespaceLimitError } from "./namespace-limits.js";

/** Shortest time between two progress updates handed on: the server decides how often it sends them. */
export const PROGRESS_EVERY_MS = 500;

/** How long one call may take: `idleMs` without progress, `totalMs` whatever progress it sends. */
export interface CallTimes {
  idleMs: number;
  totalMs: number;
}

/**
 * The limits one running call is held to, whatever its server sends: its total time
 * (progress extends it no further than `totalMs`), progress handed on at most once per
 * PROGRESS_EVERY_MS (the latest wins), and one open question to the room at a time. A
 * call that breaks one is ended: `signal` aborts with a NamespaceLimitError, logged once.
 */
export class CallGuard {
  private readonly ended = new AbortController();
  private readonly totalTimer: NodeJS.Timeout | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  private latestProgress: CallProgress | undefined;
  private lastProgressAt = 0;
  private questionOpen = false;
  /** Set once a limit ended the call (not the caller's cancel). */
  private limited = false;
  private unlink: (() => void) | undefined;
  /** Aborted when a limit ends the call or the caller cancels it. */
  readonly signal: AbortSignal;

  constructor(
    private readonly namespace: string,
    private readonly tool: string,
    private readonly log: Logger,
    times: CallTimes,
    callerSignal: AbortSignal | undefined,
  ) {
    // The caller's abort is handed on by a listener, not AbortSignal.any: a composite
    // signal per call (weak references and a finalizer each) was a visible share of a
    // burst's CPU (docs/benchmarks.md), and this one lives exactly as long as the call.
    this.signal = this.ended.signal;
    if (callerSignal?.aborted) this.ended.abort(callerSignal.reason);
    else if (callerSignal) {
      const forward = () => this.ended.abort(callerSignal.reason);
      callerSignal.addEventListener("abort", forward, { once: true });
      this.unlink = () => callerSignal.removeEventListener("abort", forward);
    }
    // With no longer total than idle time, the SDK's own timeout is the total: no second timer.
    if (times.totalMs > times.idleMs) {
      this.totalTimer = setTimeout(() => this.tooLong(times.totalMs), times.totalMs);
      this.totalTimer.unref();
    }
  }

  /** The call's progress handler, handing on at most one update per PROGRESS_EVERY_MS, the latest. */
  progress(onProgress: ((p: CallProgress) => void) | undefined): (p: CallProgress) => void {
    return (p) => {
      if (!onProgress || this.signal.aborted) return;
      this.latestProgress = p;
      if (this.progressTimer) return;
      const wait = this.lastProgressAt + PROGRESS_EVERY_MS - Date.now();
      if (wait <= 0) this.handOn(onProgress);
      else this.progressTimer = setTimeout(() => this.handOn(onProgress), wait);
    };
  }

  /**
   * The call's question handler: one open question at a time. A second while one is open
   * ends the call (a server asking the room many questions at once is not asking them).
   */
  questions(handler: ElicitHandler): ElicitHandler {
    return async (params, signal) => {
      if (this.signal.aborted) return { action: "cancel" };
      if (this.questionOpen) {
        this.end(
          new NamespaceLimitError(
            this.namespace,
            "open_questions",
            `${this.tool} asked a second question while one was still open`,
            (ref) =>
              `${this.namespace} asked a second question while one was still open, so ${this.tool} was stopped ` +
              `(one open question per call) (ref ${ref}).`,
          ),
        );
        return { action: "cancel" };
      }
      this.questionOpen = true;
      try {
        return await handler(params, AbortSignal.any([signal, this.signal]));
      } finally {
        this.questionOpen = false;
      }
    };
  }

  /**
   * The call is over: stops the timers and hands on the latest progress not yet shown,
   * so the status message ends on what the server last said.
   */
  finish(onProgress: ((p: CallProgress) => void) | undefined): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.progressTimer);
    this.unlink?.();
    this.progressTimer = undefined;
    if (onProgress && this.latestProgress && !this.limited) onProgress(this.latestProgress);
    this.latestProgress = undefined;
  }

  private handOn(onProgress: (p: CallProgress) => void): void {
    this.progressTimer = undefined;
    const p = this.latestProgress;
    this.latestProgress = undefined;
    if (!p || this.signal.aborted) return;
    this.lastProgressAt = Date.now();
    onProgress(p);
  }

  private tooLong(totalMs: number): void {
    const seconds = Math.round(totalMs / 1000);
    this.end(
      new NamespaceLimitError(
        this.namespace,
        "call_seconds",
        `${this.tool} ran ${seconds} s, the longest a call may run (maxCallSeconds)`,
        (ref) =>
          `${this.tool} was stopped after ${seconds} s, the longest a call of ${this.namespace} may run ` +
          `(the operator's limit, maxCallSeconds) (ref ${ref}).`,
      ),
    );
  }

  private end(error: NamespaceLimitError): void {
    if (this.limited) return;
    this.limited = true;
    this.log.warn({ tool: this.tool, limit: error.limit, ref: error.ref }, `call ended: ${error.reason}`);
    this.ended.abort(error);
  }
}
