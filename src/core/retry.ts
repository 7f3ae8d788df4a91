/**
 * The one way roomgate waits and retries outside the scheduler: a backoff policy,
 * `retry(fn, classify)`, and `sleep`. Receivers, senders, Matrix requests and the
 * namespace client all back off through here, so a retry budget is read in one place.
 * (Inside a turn nothing sleeps: the scheduler parks the room; see src/scheduler.)
 */

/** Exponential backoff: the first wait, doubling per attempt up to the longest. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
  /**
   * Spread each wait over its upper half (a random wait in [w/2, w]), so that many
   * clients failing together do not retry in step. Off: exactly `w`.
   */
  jitter?: boolean;
}

/** A backoff with a budget: how many attempts in all (the first one included). */
export interface RetryPolicy extends Backoff {
  /** Attempts in all; `Infinity` retries until the signal stops it. */
  attempts: number;
}

/**
 * What to do after a failed attempt: `retry` after the backoff's wait, `{ afterMs }`
 * after the wait the other side asked for (a 429's retry-after), or `fail` (rethrow).
 */
export type RetryVerdict = "retry" | { afterMs: number } | "fail";

/** The part of an AbortSignal a wait needs (grammY's runner hands out its own kind). */
export interface Abortable {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** Thrown by `sleep` (and so by `retry`) when its signal stops the wait. */
export class StoppedError extends Error {
  constructor() {
    super("stopped");
    this.name = "StoppedError";
  }
}

/** The wait before retry number `attempt` (0 for the first retry). */
export function backoffMs(policy: Backoff, attempt: number): number {
  const wait = Math.min(policy.maxMs, policy.firstMs * 2 ** Math.min(attempt, 30));
  return policy.jitter ? wait / 2 + Math.random() * (wait / 2) : wait;
}

/** Waits `ms`; with a signal, a stop ends the wait at once with a StoppedError. */
export function sleep(ms: number, signal?: Abortable): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new StoppedError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(new StoppedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort);
  });
}

/**
 * Waits `ms` or until `signal` aborts, whichever comes first, and never rejects: for a
 * watch that a stop simply ends. Unlike `sleep(...).catch()` it builds no error, which
 * matters on a path taken once per tool call.
 */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** What `retry` reports before each wait, for a log line or a metric. */
export interface RetryNotice {
  err: unknown;
  /** The attempt that failed, from 1. */
  attempt: number;
  waitMs: number;
}

/**
 * Runs `fn` until it succeeds, `classify` says `fail`, the attempts run out or the
 * signal stops it; the last error is rethrown as it was. `fn` gets the attempt
 * number (from 1).
 */
export async function retry<T>(
  fn: (attempt: number) => Promise<T>,
  classify: (err: unknown, attempt: number) => RetryVerdict,
  policy: RetryPolicy,
  options: { signal?: Abortable; onRetry?: (notice: RetryNotice) => void } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    if (options.signal?.aborted) throw new StoppedError();
    try {
      return await fn(attempt);
    } catch (err) {
      if (options.signal?.aborted || attempt >= policy.attempts) throw err;
      const verdict = classify(err, attempt);
      if (verdict === "fail") throw err;
      const waitMs = verdict === "retry" ? backoffMs(policy, attempt - 1) : verdict.afterMs;
      options.onRetry?.({ err, attempt, waitMs });
      await sleep(waitMs, options.signal);
    }
  }
}
