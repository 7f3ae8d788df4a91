import { scanAll, type RedisClient } from "../sessions/redis-connection.js";
import type { Keys } from "../sessions/keys.js";
import { queueDepth, queueOldestSeconds, queueRooms } from "./metrics.js";

/** At most this many room inboxes are read per scrape, so a huge backlog cannot stall /metrics. */
const MAX_ROOMS = 10_000;

/**
 * Reads the queue gauges from Redis when /metrics is scraped: how many events wait
 * in room inboxes, in how many rooms, and how old the oldest is. The numbers are the
 * same from every process, since they come from the shared Redis.
 */
export function watchQueue(redis: RedisClient, keys: Keys): void {
  let reading: Promise<void> | undefined;
  const read = async () => {
    // Rooms with events are pending (waiting for a worker) or running (held by one), in some lane and shard.
    const rooms = new Set<string>();
    const sets = await scanAll(redis, `${keys.prefix}:{*}:lane:*`, 10_000);
    for (const key of sets.filter((k) => k.endsWith(":pending") || k.endsWith(":running"))) {
      for (const room of await redis.zrange(key, 0, MAX_ROOMS - 1)) rooms.add(room);
      if (rooms.size >= MAX_ROOMS) break;
    }
    let depth = 0;
    let busy = 0;
    let oldest: number | undefined;
    const list = [...rooms];
    // One room's two reads share its slot; rooms of different shards are read side by side.
    for (let i = 0; i < list.length; i += 500) {
      const replies = await Promise.all(
        list
          .slice(i, i + 500)
          .map((room) => Promise.all([redis.llen(keys.inbox(room)), redis.lindex(keys.inbox(room), 0)])),
      );
      for (const [length, head] of replies) {
        if (length === 0) continue;
        depth += length;
        busy += 1;
        const received = receivedAt(head);
        if (received !== undefined) oldest = Math.min(oldest ?? received, received);
      }
    }
    queueDepth.set(depth);
    queueRooms.set(busy);
    queueOldestSeconds.set(oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
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

function receivedAt(raw: unknown): number | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const at = (JSON.parse(raw) as { receivedAt?: unknown }).receivedAt;
    return typeof at === "number" ? at : undefined;
  } catch {
    return undefined;
  }
}
