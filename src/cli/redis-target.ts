import { join } from "node:path";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { startEmbeddedRedis } from "../sessions/embedded-redis.js";
import { stateDir } from "./paths.js";

/** The Redis a command uses, and how to let go of it. */
export interface RedisTarget {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * `REDIS_URL`, else `redis.url` from the config, else the embedded default: a
 * private redis-server with append-only data under the state folder (DESIGN §10).
 */
export async function resolveRedis(config: Config | undefined, log: Logger): Promise<RedisTarget> {
  const url = process.env.REDIS_URL ?? config?.redis.url;
  if (url) return { url, embedded: false, stop: async () => undefined };
  const dir = join(stateDir(), "redis");
  const redis = await startEmbeddedRedis({ dir, persist: true });
  log.info({ url: redis.url, dir }, "embedded redis-server started");
  return { url: redis.url, embedded: true, stop: () => redis.stop() };
}
