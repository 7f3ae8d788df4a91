import type { SendGate, SendWindow } from "../core/adapter.js";
import { PermanentSendError, SendDeferredError, TransientSendError } from "../core/delivery-errors.js";
import type { Logger } from "../core/log.js";
import { rateLimitedTotal } from "../ops/scheduler-metrics.js";
import { MatrixRequestError } from "./matrix-errors.js";

/** How hard `withMatrixRetry` tries. */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking for a longer wait than this fails instead of holding the turn. */
  maxRetryAfterMs: number;
}

/** The default policy for sends: a few quick retries, and any reasonable 429 wait honoured. */
export const SEND_RETRY: RetryPolicy = {
  attempts: 6,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 120_000,
};

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

/** HTTP status of what matrix-bot-sdk threw: a MatrixError and a raw response both carry `statusCode`. */
export function statusOf(err: unknown): number | undefined {
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** The Matrix `errcode` of what matrix-bot-sdk threw, if it is a Matrix error. */
function errcodeOf(err: unknown): string | undefined {
  const e = err as { errcode?: unknown; body?: { errcode?: unknown } } | null;
  const code = e?.errcode ?? e?.body?.errcode;
  return typeof code === "string" ? code : undefined;
}

/**
 * How long to wait before trying again after `err`, or null when it is not worth it:
 * a 429 waits what `retry_after_ms` says; 5xx and network errors back off
 * exponentially with jitter; any other error is final.
 */
export function retryDelay(err: unknown, attempt: number, policy: RetryPolicy): number | null {
  const status = statusOf(err);
  if (status === 429 || errcodeOf(err) === "M_LIMIT_EXCEEDED") {
    const e = err as { retryAfterMs?: unknown; body?: { retry_after_ms?: unknown } };
    const asked = e.retryAfterMs ?? e.body?.retry_after_ms;
    if (typeof asked === "number") return asked <= policy.maxRetryAfterMs ? asked : null;
  } else if (
    status !== undefined ? status < 500 : !NETWORK_CODES.has(String((err as { code?: unknown })?.code))
  ) {
    return null;
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return backoff / 2 + Math.random() * (backoff / 2);
}

/** Runs a homeserver request, riding out rate limits and transient failures; throws MatrixRequestError. */
export async function withMatrixRetry<T>(
  what: string,
  request: () => Promise<T>,
  log: Logger,
  policy: RetryPolicy = SEND_RETRY,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      const delay = attempt + 1 < policy.attempts ? retryDelay(err, attempt, policy) : null;
      if (delay === null) throw new MatrixRequestError(what, statusOf(err), { cause: err });
      log.warn(
        { what, status: statusOf(err), errcode: errcodeOf(err), delayMs: Math.round(delay) },
        "matrix retry",
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * One attempt of a turn's homeserver request through the scheduler's gate: the
 * attempt takes its slot (and waits out any 429 hold) on Redis' clock first; a 429
 * holds the account's window for every process for `retry_after_ms` and defers the
 * turn; a 5xx or network error is retried later with backoff; any other refusal is
 * final. The transaction id keeps a repeated attempt from posting twice.
 */
export async function gatedMatrixRequest<T>(
  what: string,
  request: () => Promise<T>,
  gate: SendGate,
  windows: SendWindow[],
  partKey: string,
  log: Logger,
): Promise<T> {
  await gate.reserve(windows, partKey);
  try {
    return await request();
  } catch (err) {
    const status = statusOf(err);
    if (status === 429 || errcodeOf(err) === "M_LIMIT_EXCEEDED") {
      const e = err as { retryAfterMs?: unknown; body?: { retry_after_ms?: unknown } };
      const asked = Number(e.retryAfterMs ?? e.body?.retry_after_ms ?? 1000);
      const waitMs = Number.isFinite(asked) && asked > 0 ? asked : 1000;
      log.warn({ what, retryAfterMs: waitMs }, "matrix: 429 too many requests; holding the account's sends");
      rateLimitedTotal.inc({ platform: "matrix", method: what });
      await gate.hold(windows, waitMs);
      throw new SendDeferredError(waitMs, `429 from ${what}`, { cause: err });
    }
    const transient =
      status !== undefined ? status >= 500 : NETWORK_CODES.has(String((err as { code?: unknown })?.code));
    const failure = new MatrixRequestError(what, status, { cause: err });
    if (transient) throw new TransientSendError(failure.message, { cause: failure });
    throw new PermanentSendError(failure.message, { cause: failure });
  }
}
