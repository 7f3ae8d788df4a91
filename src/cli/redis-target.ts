import type { Config } from "../core/config.js";
import { registerSecret, type Logger } from "../core/log.js";
import { startEmbeddedRedis } from "../sessions/embedded-redis.js";
import { checkRedisPersistence } from "../sessions/redis-persistence.js";
import { privateStateDir } from "./paths.js";
import { lockRedisDir } from "./redis-dir-lock.js";

/** The Redis a command uses, and how to let go of it. */
export interface RedisTarget {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * `REDIS_URL`, else `redis.url` from the config, else the embedded default: a
 * private redis-server with append-only data under the state folder (DESIGN §10).
 * The embedded server never outlives this process: it is stopped on every exit
 * path, and one left by a killed process is stopped by the next start.
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
  const dir = privateStateDir("redis");
  const lock = await lockRedisDir(dir, log);
  let redis;
  try {
    redis = await startEmbeddedRedis({ dir, persist: true });
  } catch (err) {
    lock.release();
    throw err;
  }
  registerSecret(passwordOf(redis.url));
  const pid = redis.pid;
  // A last resort for exits that skip `stop` (process.exit after an error): signals are synchronous.
  const onExit = () => {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already stopped.
    }
    lock.release();
  };
  process.once("exit", onExit);
  log.info({ port: redis.port, dir, pid }, "embedded redis-server started");
  const started = redis;
  return {
    url: started.url,
    embedded: true,
    stop: async () => {
      await started.stop();
      process.removeListener("exit", onExit);
      lock.release();
    },
  };
}

function passwordOf(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}
