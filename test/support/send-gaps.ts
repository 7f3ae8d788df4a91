import type { ApiCall } from "./telegram-standin-wire.js";

/** Methods that post or change a message, the ones Telegram's flood limits count. */
const COUNTED = /^(send(?!ChatAction)|edit|copy|forward)/;

/**
 * Every attempt that reached a chat less than `minMs` after the previous one (429-answered
 * attempts included). A draft (sendMessageDraft) is no message and has no per-chat pace.
 */
export function sendGaps(calls: ApiCall[], minMs = 1000): { chatId: number; gapMs: number }[] {
  const last = new Map<string, number>();
  const gaps: { chatId: number; gapMs: number }[] = [];
  for (const call of calls) {
    if (!COUNTED.test(call.method) || call.method === "sendMessageDraft") continue;
    const chatId = Number(call.params.chat_id);
    const key = `${call.botId}:${chatId}`;
    const prev = last.get(key);
    if (prev !== undefined && call.at - prev < minMs) gaps.push({ chatId, gapMs: call.at - prev });
    last.set(key, call.at);
  }
  return gaps;
}

/** The most counted attempts one bot made within any one-second window. */
export function peakPerSecond(calls: ApiCall[]): number {
  const times = calls.filter((c) => COUNTED.test(c.method)).map((c) => c.at);
  let peak = 0;
  for (let i = 0, j = 0; j < times.length; j += 1) {
    while (times[j]! - times[i]! >= 1000) i += 1;
    peak = Math.max(peak, j - i + 1);
  }
  return peak;
}

/** The most of these times (ascending) within any `ms`-long span: a group's sends in its minute. */
export function mostWithin(times: number[], ms: number): number {
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j += 1) {
    while (times[j]! - times[i]! >= ms) i += 1;
    most = Math.max(most, j - i + 1);
  }
  return most;
}
