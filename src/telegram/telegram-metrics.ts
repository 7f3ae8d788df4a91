import type { Transformer } from "grammy";
import { rateLimitedTotal, sendRetriesTotal, sendsTotal } from "../ops/metrics.js";

/** Bot API methods that put something in a chat (sendChatAction only shows "typing…"). */
function isSend(method: string): boolean {
  return (method.startsWith("send") && method !== "sendChatAction") || method.startsWith("edit");
}

/**
 * Counts every attempt of every Bot API call that sends or edits a message, and every
 * 429 on any call. Installed innermost, it sees each attempt auto-retry makes; a
 * payload object seen before is a retry of it.
 */
export function countTelegramCalls(): Transformer {
  const seen = new WeakSet<object>();
  return async (prev, method, payload, signal) => {
    const send = isSend(method);
    if (send && typeof payload === "object" && payload !== null) {
      if (seen.has(payload)) sendRetriesTotal.inc({ platform: "telegram" });
      else seen.add(payload);
    }
    let result;
    try {
      result = await prev(method, payload, signal);
    } catch (err) {
      if (send) sendsTotal.inc({ platform: "telegram", outcome: "failed" });
      throw err;
    }
    const limited = !result.ok && result.error_code === 429;
    if (limited) rateLimitedTotal.inc({ platform: "telegram" });
    if (send)
      sendsTotal.inc({
        platform: "telegram",
        outcome: result.ok ? "ok" : limited ? "rate_limited" : "failed",
      });
    return result;
  };
}
