import { sendRetriesTotal, sendsTotal } from "./metrics.js";

/** Sends that failed recently, by a key naming what was sent, so that sending it again counts as a retry. */
const failed = new Map<string, number>();
const REMEMBER_MS = 2 * 3600_000;
const MAX_REMEMBERED = 5000;

/** The outcome of one send attempt. */
export type SendOutcome = "ok" | "rate_limited" | "failed";

/**
 * Counts one attempt of a send: `key` names what is sent (a Matrix transaction
 * path, a Telegram chat and text), so an attempt after a failed one of the same
 * key — an in-call retry or a parked turn trying again later — counts as a retry.
 * `key` may be a function: it is called only when a failure is remembered or this one failed.
 */
export function countSendAttempt(platform: string, key: string | (() => string), outcome: SendOutcome): void {
  // A success with no failure remembered is no retry: its key (a digest) need not be built.
  if (outcome === "ok" && failed.size === 0) {
    sendsTotal.inc({ platform, outcome });
    return;
  }
  if (typeof key === "function") key = key();
  if (failed.delete(key)) sendRetriesTotal.inc({ platform });
  sendsTotal.inc({ platform, outcome });
  if (outcome === "ok") return;
  failed.set(key, Date.now());
  if (failed.size > MAX_REMEMBERED) {
    const cutoff = Date.now() - REMEMBER_MS;
    for (const [k, at] of failed) if (at < cutoff || failed.size > MAX_REMEMBERED) failed.delete(k);
  }
}

/** Wraps one send request so that each of its attempts is counted under `key`. */
export function countedAttempts<T>(
  platform: string,
  key: string,
  request: () => Promise<T>,
  statusOf: (err: unknown) => number | undefined,
): () => Promise<T> {
  return async () => {
    try {
      const result = await request();
      countSendAttempt(platform, key, "ok");
      return result;
    } catch (err) {
      countSendAttempt(platform, key, statusOf(err) === 429 ? "rate_limited" : "failed");
      throw err;
    }
  };
}
