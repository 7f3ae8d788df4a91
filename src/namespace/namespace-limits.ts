import { randomBytes } from "node:crypto";
import type { Config } from "../core/config.js";
import { NamespaceError } from "../core/errors.js";
import { namespaceLimitsTotal } from "../ops/metrics.js";
import { DEFAULT_MAX_REPLY_BYTES } from "./reply-cap.js";

/** The process-wide limits (`limits.*`) that every namespace is held to. */
export type NamespaceLimits = Pick<
  Config["limits"],
  "maxToolResultBytes" | "maxTools" | "maxToolListBytes" | "maxToolListPages"
>;

/** The defaults of `limits.*` for a namespace client built without a configuration (`roomgate check`, tests). */
export const DEFAULT_NAMESPACE_LIMITS: NamespaceLimits = {
  maxToolResultBytes: DEFAULT_MAX_REPLY_BYTES,
  maxTools: 2_000,
  maxToolListBytes: 10_000_000,
  maxToolListPages: 100,
};

/** Which limit a namespace broke: the metric's `limit` label, one of a fixed few. */
export type LimitName = "tools" | "tool_list_bytes" | "tool_list_pages" | "call_seconds" | "open_questions";

/**
 * A namespace broke one of its limits and was stopped: its listing refused or its call
 * ended. `reason` says which limit in words (and names the setting when there is one),
 * `userText` is the room's one line; each is counted in `roomgate_namespace_limits_total`.
 */
export class NamespaceLimitError extends NamespaceError {
  constructor(
    namespace: string,
    readonly limit: LimitName,
    readonly reason: string,
    userText: (ref: string) => string,
    readonly ref = randomBytes(4).toString("hex"),
  ) {
    super(namespace, `${namespace} broke a limit: ${reason} (ref ${ref})`, { userText: userText(ref) });
    // Counted where it is made: every break is one error, whoever catches it.
    namespaceLimitsTotal.inc({ namespace, limit });
  }
}

/** A listing that went past one of `limits.maxTools`, `maxToolListBytes`, `maxToolListPages`. */
export function listingTooLarge(namespace: string, limit: LimitName, reason: string): NamespaceLimitError {
  return new NamespaceLimitError(
    namespace,
    limit,
    reason,
    (ref) => `The tools of ${namespace} were not taken: ${reason} (ref ${ref}).`,
  );
}
