import type { RedisClient } from "../sessions/redis-connection.js";
import type { Keys } from "../sessions/keys.js";
import { readQueueDepth } from "../scheduler/queue-depth.js";
import { queueDepth, queueOldestSeconds, queueRooms } from "./metrics.js";

/**
 * Reads the queue gauges from Redis when /metrics is scraped (src/scheduler/queue-depth.ts):
 * how many events wait in room inboxes, in how many rooms, and how old the oldest is.
 * The numbers are the same from every process, since they come from the shared Redis.
 */
export function watchQueue(redis: RedisClient, keys: Keys): void {
  let reading: Promise<void> | undefined;
  const read = async () => {
    const { depth, rooms, oldestAt } = await readQueueDepth(redis, keys);
    queueDepth.set(depth);
    queueRooms.set(rooms);
    queueOldestSeconds.set(oldestAt === undefined ? 0 : Math.max(0, (Date.now() - oldestAt) / 1000));
  };
  const collect = async () => {
    // Three gauges, one read: whichever is collected first starts it, the others wait for it.
    reading ??= read()
      .catch(() => undefined)
      .finally(() => setTimeout(() => (reading = undefined), 0));
    await reading;
  };
  for (const gauge of [queueDepth, queueRooms, queueOldestSeconds]) {
    (gauge as unknown as { collect: () => Promise<void> }).collect = collect;
  }
}
