import type { SendGate, SendWindow } from "../core/adapter.js";
import { PermanentSendError, SendDeferredError, TransientSendError } from "../core/delivery-errors.js";
import type { Logger } from "../core/log.js";
import { backoffMs, retry, type RetryPolicy, type RetryVerdict } from "../core/retry.js";
import { rateLimitedTotal } from "../ops/metrics.js";
import { MatrixRequestError } from "./matrix-errors.js";

/** How hard `withMatrixRetry` tries: the shared backoff, and the longest 429 wait it honours. */
export interface MatrixRetryPolicy extends RetryPolicy {
  /** A 429 asking for a longer wait than this fails instead of holding the turn. */
  maxRetryAfterMs: number;
}

/** The default policy for sends: a few quick retries, and any reasonable 429 wait honoured. */
export const SEND_RETRY: MatrixRetryPolicy = {
  attempts: 6,
  firstMs: 250,
  maxMs: 10_000,
  jitter: true,
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

/** Network failures before a connection exists: the request was never written. */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** HTTP status of what matrix-bot-sdk threw: a MatrixError and a raw response both carry `statusCode`. */
export function statusOf(err: unknown): number | undefined {
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/**
 * The homeserver's answer behind a failed request, whether matrix-bot-sdk threw it or
 * withMatrixRetry wrapped it: its HTTP status and JSON body (a 404, or a 401 carrying
 * user-interactive auth's flows).
 */
export function refusalOf(err: unknown): { status: number | undefined; body: unknown } {
  const raw = err instanceof MatrixRequestError ? err.cause : err;
  return { status: statusOf(raw), body: (raw as { body?: unknown } | null)?.body };
}

/** The Matrix `errcode` of what matrix-bot-sdk threw, if it is a Matrix error. */
function errcodeOf(err: unknown): string | undefined {
  const e = err as { errcode?: unknown; body?: { errcode?: unknown } } | null;
  const code = e?.errcode ?? e?.body?.errcode;
  return typeof code === "string" ? code : undefined;
}

/**
 * Whether `err` is a rate limit (429 or M_LIMIT_EXCEEDED), and the wait it asks for
 * (`retry_after_ms`, on the error or its body) when it names one.
 */
function rateLimitOf(err: unknown): { waitMs: number | undefined } | undefined {
  if (statusOf(err) !== 429 && errcodeOf(err) !== "M_LIMIT_EXCEEDED") return undefined;
  const e = err as { retryAfterMs?: unknown; body?: { retry_after_ms?: unknown } };
  const asked = Number(e.retryAfterMs ?? e.body?.retry_after_ms);
  return { waitMs: Number.isFinite(asked) && asked >= 0 ? asked : undefined };
}

/** A failure a later attempt may not have: a 5xx, or no answer at all (a network error). */
function isTransient(err: unknown): boolean {
  const status = statusOf(err);
  return status !== undefined ? status >= 500 : NETWORK_CODES.has(String((err as { code?: unknown })?.code));
}

/**
 * What to do after `err`: a 429 waits what `retry_after_ms` says (or fails when that is
 * longer than the policy honours; without a wait it backs off); 5xx and network errors
 * back off; any other error is final.
 */
export function retryVerdict(err: unknown, policy: MatrixRetryPolicy): RetryVerdict {
  const limit = rateLimitOf(err);
  if (limit?.waitMs !== undefined)
    return limit.waitMs <= policy.maxRetryAfterMs ? { afterMs: limit.waitMs } : "fail";
  return limit || isTransient(err) ? "retry" : "fail";
}

/** How long to wait before retry number `attempt` (from 0) after `err`, or null when it is not worth it. */
export function retryDelay(err: unknown, attempt: number, policy: MatrixRetryPolicy): number | null {
  const verdict = retryVerdict(err, policy);
  if (verdict === "fail") return null;
  return verdict === "retry" ? backoffMs(policy, attempt) : verdict.afterMs;
}

/** Runs a homeserver request, riding out rate limits and transient failures; throws MatrixRequestError. */
export async function withMatrixRetry<T>(
  what: string,
  request: () => Promise<T>,
  log: Logger,
  policy: MatrixRetryPolicy = SEND_RETRY,
): Promise<T> {
  try {
    return await retry(request, (err) => retryVerdict(err, policy), policy, {
      onRetry: ({ err, waitMs }) =>
        log.warn(
          { what, status: statusOf(err), errcode: errcodeOf(err), delayMs: Math.round(waitMs) },
          "matrix retry",
        ),
    });
  } catch (err) {
    throw new MatrixRequestError(what, statusOf(err), { cause: err });
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
    return await request().finally(() => gate.answered());
  } catch (err) {
    // The homeserver answered with a refusal, or no connection was made: nothing was posted.
    const status = statusOf(err);
    if (
      (status !== undefined && status < 500) ||
      NOT_CONNECTED.has(String((err as { code?: unknown })?.code))
    )
      gate.refused();
    const limit = rateLimitOf(err);
    if (limit) {
      const waitMs = limit.waitMs || 1000;
      log.warn({ what, retryAfterMs: waitMs }, "matrix: 429 too many requests; holding the account's sends");
      rateLimitedTotal.inc({ platform: "matrix", method: what });
      await gate.hold(windows, waitMs);
      throw new SendDeferredError(waitMs, `429 from ${what}`, { cause: err });
    }
    const failure = new MatrixRequestError(what, statusOf(err), { cause: err });
    if (isTransient(err)) throw new TransientSendError(failure.message, { cause: failure });
    throw new PermanentSendError(failure.message, { cause: failure });
  }
}
