import { join } from "node:path";
import type { Config } from "../core/config.js";
import { registerSecret, type Logger } from "../core/log.js";
import { startEmbeddedRedis } from "../sessions/embedded-redis.js";
import { checkRedisPersistence } from "../sessions/redis-persistence.js";
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
 * With `requirePersistence` (start, worker), an external Redis must persist its
 * data unless `redis.volatile` is set.
 */
export async function resolveRedis(
  config: Config | undefined,
  log: Logger,
  options: { requirePersistence?: boolean } = {},
): Promise<RedisTarget> {
  const url = process.env.REDIS_URL || config?.redis.url;
  if (url) {
    registerSecret(passwordOf(url));
    if (options.requirePersistence) await checkRedisPersistence(url, config?.redis.volatile ?? false, log);
    return { url, embedded: false, stop: async () => undefined };
  }
  const dir = join(stateDir(), "redis");
  const redis = await startEmbeddedRedis({ dir, persist: true });
  registerSecret(passwordOf(redis.url));
  log.info({ port: redis.port, dir }, "embedded redis-server started");
  return { url: redis.url, embedded: true, stop: () => redis.stop() };
}

function passwordOf(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}
