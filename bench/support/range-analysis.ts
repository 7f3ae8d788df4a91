import calculateSlot from "cluster-key-slot";
import { telegramRoom } from "../../src/core/room.js";
import { DEFAULT_SHARDS } from "../../src/core/config/queue.js";
import { RoomShards } from "../../src/scheduler/room-shards.js";

/** A send as the Bot API stand-in recorded it (performance.now() ms). */
interface Send {
  at: number;
  chatId: number;
}

/** A message as the stand-in made it available to the bot (performance.now() ms). */
interface Released {
  availableAt: number;
  chatId: number;
}

/** What a slot range down did to the rooms in it and to the others. */
export interface RangeReport {
  /** Chats whose room's shard slot was in the range down, and the others. */
  deadChats: number;
  liveChats: number;
  /** Whether the bot's send windows (`rg:rate:{tg:<bot>}:*`) were in the range down. */
  botSlotDown: boolean;
  /** The longest time, from the fault until the range was back, in which no chat outside the range got a send, ms. */
  liveSilentMs: number;
  /**
   * The longest time a group chat outside the range had an unanswered message while
   * the range was down and got no reply (counted from the fault at the earliest, to
   * the reply, which may come after the range is back); NaN when there is none.
   */
  liveGroupsStallMs: number;
  /** The same for every chat outside the range, private ones too (NaN when there is none). */
  liveChatsStallMs: number;
  /** From the range being back to the first send to a chat in it, ms (NaN when none had anything to get). */
  deadResumedMs: number;
}

/** Slot ranges as CLUSTER NODES lists them ("0-5460", "42"; migrating entries in brackets are left out). */
export function parseSlotRanges(slots: string[]): [number, number][] {
  return slots
    .filter((s) => !s.startsWith("["))
    .map((s) => {
      const [from, to] = s.split("-").map(Number);
      return [from!, to ?? from!] as [number, number];
    });
}

function inRanges(slot: number, ranges: [number, number][]): boolean {
  return ranges.some(([from, to]) => slot >= from && slot <= to);
}

/** The hash slot of a Telegram chat's room keys (its shard's tag), as roomgate places them. */
export function chatSlot(botId: number, chatId: number, prefix = "rg", shards = DEFAULT_SHARDS): number {
  const rooms = new RoomShards(prefix, { shards });
  return calculateSlot(rooms.tag(rooms.shardOf(telegramRoom(botId, chatId))));
}

/**
 * Splits the sends by whether their chat's room was in the range down (`ranges`, from
 * `faultAt` to `backAt`, performance.now() ms) and measures how long the others went
 * without a send while it was down, and how soon the range's own chats got one after.
 */
export function rangeReport(
  sends: Send[],
  options: {
    botId: number;
    chats: number[];
    ranges: [number, number][];
    faultAt: number;
    backAt: number;
    released: Released[];
  },
): RangeReport {
  const { botId, chats, ranges, faultAt, backAt, released } = options;
  const dead = new Set(chats.filter((c) => inRanges(chatSlot(botId, c), ranges)));
  const live = sends.filter((s) => !dead.has(s.chatId));
  const liveChats = chats.filter((c) => !dead.has(c));
  const liveGroups = liveChats.filter((c) => c < 0);
  const waitOf = (chat: number) =>
    longestWait(
      released.filter((m) => m.chatId === chat).map((m) => m.availableAt),
      sends.filter((s) => s.chatId === chat).map((s) => s.at),
      faultAt,
      backAt,
    );
  const longestOf = (of: number[]) => (of.length === 0 ? Number.NaN : Math.max(...of.map(waitOf)));
  const resumed = sends
    .filter((s) => dead.has(s.chatId) && s.at >= backAt)
    .map((s) => s.at)
    .sort((a, b) => a - b)[0];
  return {
    deadChats: dead.size,
    liveChats: chats.length - dead.size,
    botSlotDown: inRanges(calculateSlot(`tg:${botId}`), ranges),
    liveSilentMs: longestSilence(
      live.map((s) => s.at),
      faultAt,
      backAt,
    ),
    liveGroupsStallMs: longestOf(liveGroups),
    liveChatsStallMs: longestOf(liveChats),
    deadResumedMs: resumed === undefined ? Number.NaN : resumed - backAt,
  };
}

/** The longest time from `faultAt` until the first send at or after `backAt` without a send. */
function longestSilence(times: number[], faultAt: number, backAt: number): number {
  const points = [faultAt, ...times.filter((t) => t > faultAt && t < backAt).sort((a, b) => a - b)];
  const after = times.filter((t) => t >= backAt).sort((a, b) => a - b)[0];
  points.push(after ?? backAt);
  return points.slice(1).reduce((longest, t, i) => Math.max(longest, t - points[i]!), 0);
}

/**
 * The longest time one chat (its messages' and its sends' times) had a message waiting
 * and got no send: from its first waiting message, or its last send while others
 * waited, to the next send; over the waits that began before `backAt` and ended after
 * `faultAt`, each counted from `faultAt` at the earliest.
 */
function longestWait(messages: number[], replies: number[], faultAt: number, backAt: number): number {
  const marks = [
    ...messages.map((at) => ({ at, reply: false })),
    ...replies.map((at) => ({ at, reply: true })),
  ].sort((a, b) => a.at - b.at || Number(a.reply) - Number(b.reply));
  let pending = 0;
  let since = 0;
  let longest = 0;
  for (const mark of marks) {
    if (!mark.reply) {
      if (pending === 0) since = mark.at;
      pending += 1;
    } else if (pending > 0) {
      if (since < backAt && mark.at > faultAt)
        longest = Math.max(longest, mark.at - Math.max(since, faultAt));
      pending -= 1;
      since = mark.at;
    }
  }
  return longest;
}
