import { rateLimitedTotal, sendRetriesTotal, sendsTotal } from "./metrics.js";

/**
 * Wraps one send so that every attempt of it is counted: the first call is a send,
 * later calls are retries; an error whose status is 429 counts as rate limited.
 */
export function countedAttempts<T>(
  platform: string,
  request: () => Promise<T>,
  statusOf: (err: unknown) => number | undefined,
): () => Promise<T> {
  let attempts = 0;
  return async () => {
    if (attempts++ > 0) sendRetriesTotal.inc({ platform });
    try {
      const result = await request();
      sendsTotal.inc({ platform, outcome: "ok" });
      return result;
    } catch (err) {
      const limited = statusOf(err) === 429;
      if (limited) rateLimitedTotal.inc({ platform });
      sendsTotal.inc({ platform, outcome: limited ? "rate_limited" : "failed" });
      throw err;
    }
  };
}
