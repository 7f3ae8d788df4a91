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
    let depth = 0;
    let rooms = 0;
    let oldest: number | undefined;
    let cursor = "0";
    do {
      const [next, found] = await redis.scan(cursor, "MATCH", keys.inboxPattern, "COUNT", 500);
      cursor = next;
      if (found.length === 0) continue;
      const pipeline = redis.pipeline();
      for (const key of found) pipeline.llen(key).lindex(key, 0);
      const replies = (await pipeline.exec()) ?? [];
      for (let i = 0; i < replies.length; i += 2) {
        const length = Number(replies[i]?.[1] ?? 0);
        if (length === 0) continue;
        depth += length;
        rooms += 1;
        const received = receivedAt(replies[i + 1]?.[1]);
        if (received !== undefined) oldest = Math.min(oldest ?? received, received);
      }
    } while (cursor !== "0" && rooms < MAX_ROOMS);
    queueDepth.set(depth);
    queueRooms.set(rooms);
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
