import type { RecordedSend, ReleasedMessage } from "./bot-api-standin.js";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";

/** The text of message `seq` in chat `chatId`; the echo answer repeats it, so a reply names its message. */
export function messageText(chatId: number, seq: number, extra = ""): string {
  return `m${chatId}.${seq}${extra ? ` ${extra}` : ""}`;
}

const MARK = /m(-?\d+)\.(\d+)/;

/** Telegram's send limits the recorder checks (DESIGN §8). */
export interface Limits {
  perChatGapMs: number;
  perBotPerSecond: number;
  perGroupPerMinute: number;
}

/** Telegram's documented defaults. */
export const TELEGRAM_LIMITS: Limits = { perChatGapMs: 1000, perBotPerSecond: 30, perGroupPerMinute: 20 };

/** What one run delivered, judged message by message. */
export interface DeliveryReport {
  turns: number;
  delivered: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** Replies that name no message or the wrong chat. */
  stray: number;
  /** Consecutive sends to one chat closer than the per-chat gap, and those closer than gap − tolerance. */
  chatGapsUnder1s: number;
  chatGapViolations: number;
  minChatGapMs: number;
  /** Highest sends in any 1 s window for the bot, and whether any (1 s − tolerance) window held more than the cap. */
  maxBotPerSecond: number;
  botRateViolations: number;
  groupRateViolations: number;
  longestStallMs: number;
  drainMs: number;
  /** Up to ten of the messages never answered, and of those answered twice, for the log. */
  lostSample: string[];
  duplicateSample: string[];
  /** Latency from available to reply received, ms, sorted. */
  latencies: number[];
  /**
   * The same latency in two parts, for the messages the stand-in saw handed over:
   * from available to the bot having it (getUpdates' answer, or the webhook post), and
   * from then to the reply received (the bot's own time). Sorted.
   */
  toBot: number[];
  inBot: number[];
}

/**
 * Matches replies to the messages they answer and checks every platform rule the
 * stand-in cannot refuse on its own: one reply per message, in chat order, and the
 * send limits, with `toleranceMs` of network and scheduling jitter allowed.
 */
export function analyse(
  released: ReleasedMessage[],
  sends: RecordedSend[],
  options: { limits?: Limits; toleranceMs?: number } = {},
): DeliveryReport {
  const limits = options.limits ?? TELEGRAM_LIMITS;
  const tolerance = options.toleranceMs ?? 100;
  const byKey = new Map<string, ReleasedMessage>();
  for (const m of released) {
    const mark = MARK.exec(m.text);
    if (mark) byKey.set(`${mark[1]}.${mark[2]}`, m);
  }
  const replies = new Map<string, number>();
  const latencies: number[] = [];
  const toBot: number[] = [];
  const inBot: number[] = [];
  const lastSeq = new Map<number, number>();
  let duplicated = 0;
  let outOfOrder = 0;
  let stray = 0;
  const ordered = [...sends].sort((a, b) => a.at - b.at);
  for (const s of ordered) {
    // A notice that a message waits for Redis answers no message; it still counts in the chat's gaps.
    if (s.text === UNQUEUED_NOTICE) continue;
    const mark = MARK.exec(s.text);
    const key = mark ? `${mark[1]}.${mark[2]}` : "";
    const message = byKey.get(key);
    if (!mark || !message || Number(mark[1]) !== s.chatId) {
      stray += 1;
      continue;
    }
    const count = (replies.get(key) ?? 0) + 1;
    replies.set(key, count);
    if (count > 1) {
      duplicated += 1;
      continue;
    }
    latencies.push(s.at - message.availableAt);
    if (message.handedAt !== undefined) {
      toBot.push(message.handedAt - message.availableAt);
      inBot.push(s.at - message.handedAt);
    }
    const seq = Number(mark[2]);
    if (seq < (lastSeq.get(s.chatId) ?? -1)) outOfOrder += 1;
    lastSeq.set(s.chatId, Math.max(seq, lastSeq.get(s.chatId) ?? -1));
  }
  const gaps = chatGaps(ordered);
  const lastAvailable = Math.max(0, ...released.map((m) => m.availableAt));
  const lastReply = Math.max(0, ...ordered.map((s) => s.at));
  return {
    turns: byKey.size,
    delivered: replies.size,
    lost: byKey.size - replies.size,
    duplicated,
    outOfOrder,
    stray,
    chatGapsUnder1s: gaps.filter((g) => g < limits.perChatGapMs).length,
    chatGapViolations: gaps.filter((g) => g < limits.perChatGapMs - tolerance).length,
    minChatGapMs: gaps.length ? Math.min(...gaps) : Number.NaN,
    maxBotPerSecond: maxInWindow(
      ordered.map((s) => s.at),
      1000,
    ),
    botRateViolations: countOver(
      ordered.map((s) => s.at),
      1000 - tolerance,
      limits.perBotPerSecond,
    ),
    groupRateViolations: groupViolations(ordered, limits.perGroupPerMinute, tolerance),
    longestStallMs: longestStall(released, ordered),
    drainMs: ordered.length ? Math.max(0, lastReply - lastAvailable) : Number.NaN,
    lostSample: [...byKey.keys()].filter((k) => !replies.has(k)).slice(0, 10),
    duplicateSample: [...replies]
      .filter(([, n]) => n > 1)
      .map(([k]) => k)
      .slice(0, 10),
    latencies: latencies.sort((a, b) => a - b),
    toBot: toBot.sort((a, b) => a - b),
    inBot: inBot.sort((a, b) => a - b),
  };
}

/** The p-th percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function chatGaps(sends: RecordedSend[]): number[] {
  const last = new Map<number, number>();
  const gaps: number[] = [];
  for (const s of sends) {
    const previous = last.get(s.chatId);
    if (previous !== undefined) gaps.push(s.at - previous);
    last.set(s.chatId, s.at);
  }
  return gaps;
}

function maxInWindow(times: number[], windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** Sends that found more than `max` others in the `windowMs` before them. */
function countOver(times: number[], windowMs: number, max: number): number {
  let over = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= windowMs) start += 1;
    if (end - start + 1 > max) over += 1;
  }
  return over;
}

function groupViolations(sends: RecordedSend[], perMinute: number, tolerance: number): number {
  const byGroup = new Map<number, number[]>();
  for (const s of sends) if (s.chatId < 0) byGroup.set(s.chatId, [...(byGroup.get(s.chatId) ?? []), s.at]);
  let over = 0;
  for (const times of byGroup.values()) over += countOver(times, 60_000 - tolerance, perMinute);
  return over;
}

/** The longest time any chat had an unanswered message and got no reply. */
function longestStall(released: ReleasedMessage[], sends: RecordedSend[]): number {
  type Mark = { at: number; delta: 1 | -1 };
  const byChat = new Map<number, Mark[]>();
  const add = (chat: number, mark: Mark) => byChat.set(chat, [...(byChat.get(chat) ?? []), mark]);
  for (const m of released) add(m.chatId, { at: m.availableAt, delta: 1 });
  for (const s of sends) add(s.chatId, { at: s.at, delta: -1 });
  let longest = 0;
  for (const marks of byChat.values()) {
    marks.sort((a, b) => a.at - b.at || b.delta - a.delta);
    let pending = 0;
    let since = 0;
    for (const mark of marks) {
      if (pending > 0) longest = Math.max(longest, mark.at - since);
      pending = Math.max(0, pending + mark.delta);
      since = mark.at;
    }
  }
  return longest;
}
