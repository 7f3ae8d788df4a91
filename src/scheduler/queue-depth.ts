import type { RedisClient } from "../sessions/redis-connection.js";
import { scanAll } from "../sessions/redis-masters.js";
import { schedulerKeysOf, type KeyLayout } from "./scheduler-keys.js";

/** At most this many room inboxes are read per look, so a huge backlog cannot stall a scrape. */
const MAX_ROOMS = 10_000;

/** How much waits in the scheduler: events in room inboxes, rooms with any, when the oldest came (ms). */
export interface QueueDepth {
  depth: number;
  rooms: number;
  oldestAt: number | undefined;
}

/**
 * Reads how many events wait in room inboxes, in how many rooms, and when the oldest
 * was received, from the shared Redis (the same from every process): for /metrics.
 */
export async function readQueueDepth(redis: RedisClient, layout: KeyLayout): Promise<QueueDepth> {
  const keys = schedulerKeysOf(layout);
  // Rooms with events are pending (waiting for a worker) or running (held by one), in some lane and shard.
  const rooms = new Set<string>();
  const sets = await scanAll(redis, `${keys.prefix}:{*}:lane:*`, 10_000);
  for (const key of sets.filter((k) => k.endsWith(":pending") || k.endsWith(":running"))) {
    for (const room of await redis.zrange(key, 0, MAX_ROOMS - 1)) rooms.add(room);
    if (rooms.size >= MAX_ROOMS) break;
  }
  let depth = 0;
  let busy = 0;
  let oldestAt: number | undefined;
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
      if (received !== undefined) oldestAt = Math.min(oldestAt ?? received, received);
    }
  }
  return { depth, rooms: busy, oldestAt };
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
