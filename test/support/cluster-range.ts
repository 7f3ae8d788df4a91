import { chatSlot, parseSlotRanges } from "../../bench/support/range-analysis.js";
import type { RedisClusterTopology } from "../../bench/support/redis-topology.js";
import type { RedisServer } from "../../src/sessions/redis-server.js";

/**
 * The master a range-down test kills: one whose slot ranges hold none of the `kept`
 * slots (the bot's send windows, a lane's wake-up list), and whether a Telegram chat's
 * room lies in those ranges (its room's shard, as roomgate places it).
 */
export async function rangeToKill(
  cluster: RedisClusterTopology,
  kept: number[],
  rooms: { botId: number; prefix: string; shards: number },
): Promise<{ master: RedisServer; holds: (chatId: number) => boolean }> {
  const within = (slot: number, ranges: [number, number][]) =>
    ranges.some(([from, to]) => slot >= from && slot <= to);
  for (const master of await cluster.masters()) {
    const ranges = parseSlotRanges((await cluster.identify(master)).slots);
    if (kept.some((slot) => within(slot, ranges))) continue;
    const holds = (chatId: number) =>
      within(chatSlot(rooms.botId, chatId, rooms.prefix, rooms.shards), ranges);
    return { master, holds };
  }
  throw new Error(`every master holds one of the slots ${kept.join(", ")}`);
}
