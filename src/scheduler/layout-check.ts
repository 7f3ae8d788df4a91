import { RoomgateError } from "../core/errors.js";
import { schedulerKeysOf, type KeyLayout } from "./scheduler-keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";

/** The configured shard count differs from the one this key prefix's data was written with. */
export class LayoutMismatchError extends RoomgateError {}

/**
 * Records the shard count a key prefix is used with on first use and refuses a
 * different one later: a room's keys live in its shard, so changing `queue.shards`
 * under existing data would leave every queued turn and session where no worker looks.
 */
export async function checkLayout(redis: RedisClient, layout: KeyLayout): Promise<void> {
  const keys = schedulerKeysOf(layout);
  const written = `shards=${keys.shards}`;
  await redis.set(keys.layout, written, "NX");
  const stored = await redis.get(keys.layout);
  if (stored !== null && stored !== written) {
    throw new LayoutMismatchError(
      `queue.shards is ${keys.shards}, but the data under key prefix "${keys.prefix}" was written with ` +
        `${stored.replace("shards=", "")} shards; set queue.shards back, or use a new redis.prefix`,
    );
  }
}
