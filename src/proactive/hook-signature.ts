import { createHmac, timingSafeEqual } from "node:crypto";

/** How far a delivery's timestamp may be from this process's clock. */
export const HOOK_WINDOW_MS = 5 * 60_000;

/** The signature a sender puts in `X-Roomgate-Signature`: `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`. */
export function signHook(secret: string, timestamp: string, body: Buffer | string): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex");
  return `sha256=${mac}`;
}

/** Why a delivery's signature headers are refused (401), or undefined when they are good. */
export type SignatureProblem = "missing" | "bad_signature" | "stale";

/**
 * Checks a delivery's signature in constant time (both sides hashed to equal length
 * first, so neither the length nor a prefix of the expected value leaks), then its
 * timestamp against this process's clock.
 */
export function checkHookSignature(
  secret: string,
  timestamp: string | undefined,
  signature: string | undefined,
  body: Buffer,
  nowMs: number,
): SignatureProblem | undefined {
  if (timestamp === undefined || signature === undefined) return "missing";
  const expected = createHmac("sha256", "compare")
    .update(signHook(secret, timestamp, body))
    .digest();
  const given = createHmac("sha256", "compare").update(signature.trim().toLowerCase()).digest();
  if (!timingSafeEqual(expected, given)) return "bad_signature";
  if (!/^\d{1,12}$/.test(timestamp.trim())) return "stale";
  if (Math.abs(nowMs - Number(timestamp.trim()) * 1000) > HOOK_WINDOW_MS) return "stale";
  return undefined;
}
