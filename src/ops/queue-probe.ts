import type { Redis } from "ioredis";
import type { Keys } from "../sessions/keys.js";
import { queueDepth, queueOldestSeconds, queueRooms } from "./metrics.js";

/** At most this many room inboxes are read per scrape, so a huge backlog cannot stall /metrics. */
const MAX_ROOMS = 10_000;

/**
 * Reads the queue gauges from Redis when /metrics is scraped: how many events wait
 * in room inboxes, in how many rooms, and how old the oldest is. The numbers are the
 * same from every process, since they come from the shared Redis.
 */
export function watchQueue(redis: Redis, keys: Keys): void {
  let reading: Promise<void> | undefined;
  const read = async () => {
    // Rooms with events are pending (waiting for a worker) or running (held by one), in some lane.
    const rooms = new Set<string>();
    for (const pattern of [keys.pending("*"), keys.running("*")]) {
      let cursor = "0";
      do {
        const [next, found] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 100);
        cursor = next;
        for (const key of found) {
          for (const room of await redis.zrange(key, 0, MAX_ROOMS - 1)) rooms.add(room);
        }
      } while (cursor !== "0" && rooms.size < MAX_ROOMS);
    }
    let depth = 0;
    let busy = 0;
    let oldest: number | undefined;
    const list = [...rooms];
    for (let i = 0; i < list.length; i += 500) {
      const pipeline = redis.pipeline();
      for (const room of list.slice(i, i + 500)) pipeline.llen(keys.inbox(room)).lindex(keys.inbox(room), 0);
      const replies = (await pipeline.exec()) ?? [];
      for (let j = 0; j < replies.length; j += 2) {
        const length = Number(replies[j]?.[1] ?? 0);
        if (length === 0) continue;
        depth += length;
        busy += 1;
        const received = receivedAt(replies[j + 1]?.[1]);
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
