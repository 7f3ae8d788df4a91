import { createHash } from "node:crypto";
import type { Transformer } from "grammy";
import { countSendAttempt } from "../ops/send-metrics.js";

/** Bot API methods that put something in a chat (sendChatAction only shows "typing…"). */
function isSend(method: string): boolean {
  return (method.startsWith("send") && method !== "sendChatAction") || method.startsWith("edit");
}

/** What one send is about: the method, the chat and a digest of the payload, so a retry has the same key. */
function sendKey(method: string, payload: unknown): string {
  const p = (payload ?? {}) as Record<string, unknown>;
  const digest = createHash("sha256")
    .update(JSON.stringify([p.text, p.caption, p.message_id, p.reply_markup]))
    .digest("base64url")
    .slice(0, 16);
  return `${method}:${String(p.chat_id)}:${digest}`;
}

/**
 * Counts every attempt of every Bot API call that sends or edits a message
 * (429s are counted with their method by the send limits). Installed innermost, it
 * sees each attempt, however it was retried.
 */
export function countTelegramCalls(): Transformer {
  return async (prev, method, payload, signal) => {
    if (!isSend(method)) return prev(method, payload, signal);
    const key = () => sendKey(method, payload);
    let result;
    try {
      result = await prev(method, payload, signal);
    } catch (err) {
      countSendAttempt("telegram", key, "failed");
      throw err;
    }
    countSendAttempt(
      "telegram",
      key,
      result.ok ? "ok" : result.error_code === 429 ? "rate_limited" : "failed",
    );
    return result;
  };
}
