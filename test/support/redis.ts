import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { inject } from "vitest";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import { Keys } from "../../src/sessions/keys.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";

/** A connection to the run's real Redis with a fresh random key prefix, removed by `cleanup`. */
export interface TestRedis {
  url: string;
  redis: Redis;
  /** The connection factory for the same Redis (what a runtime is given). */
  connection: RedisConnection;
  prefix: string;
  keys: Keys;
  /** The scheduler's keys under `prefix` (what only src/scheduler builds; tests read them). */
  schedulerKeys: SchedulerKeys;
  /** The scheduler's scripts on `redis` under `prefix`. */
  scheduler: SchedulerScripts;
  /**
   * Whether the room's worker is done with everything queued for it (no inbox, lease or
   * turn record left): the barrier after which a turn that was queued would have been answered.
   */
  drained(room: string): Promise<boolean>;
  cleanup(): Promise<void>;
}

/** Connects to the test Redis under a random prefix so tests never see each other's keys. */
export async function testRedis(): Promise<TestRedis> {
  const url = inject("redisUrl");
  if (!url) {
    throw new Error(
      "this test asks for Redis, but it runs in the unit tier (no Redis there): " +
        "rename the file to X.redis.test.ts (in-process against Redis) or X.system.test.ts (processes)",
    );
  }
  const prefix = `t${randomBytes(5).toString("hex")}`;
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  const keys = new Keys(prefix);
  const schedulerKeys = new SchedulerKeys(prefix);
  const connection = RedisConnection.single(url);
  return {
    url,
    redis,
    connection,
    prefix,
    keys,
    schedulerKeys,
    scheduler: new SchedulerScripts(redis, schedulerKeys),
    async drained(room) {
      const k = schedulerKeys.room(room);
      return (await redis.exists(k.inbox, k.lease, k.turn)) === 0;
    },
    async cleanup() {
      let cursor = "0";
      do {
        const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
        cursor = next;
        if (found.length > 0) await redis.del(...found);
      } while (cursor !== "0");
      redis.disconnect();
      connection.close();
    },
  };
}
