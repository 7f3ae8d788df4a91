import type { RedisClient } from "../sessions/redis-connection.js";

/** How long a refusal or flood notice is not repeated to the same person. */
export const NOTICE_SECONDS = 3600;

/**
 * Claims the right to say something once per `ttlSeconds` (a Redis key set only if
 * absent, expiring by Redis' own clock): true for the first caller, false while the key
 * lives. This is the only state a refused stranger leaves behind.
 */
export async function claimNotice(
  redis: RedisClient,
  key: string,
  ttlSeconds = NOTICE_SECONDS,
): Promise<boolean> {
  return (await redis.set(key, "1", "EX", ttlSeconds, "NX")) === "OK";
}
