import type { Config } from "../core/config.js";
import { registerSecret, type Logger } from "../core/log.js";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { embeddedRedisPassword, startEmbeddedRedis } from "../sessions/embedded-redis.js";
import { checkRedisPersistence } from "../sessions/redis-persistence.js";
import { privateStateDir } from "./paths.js";
import { lockOwner, lockRedisDir } from "./redis-dir-lock.js";

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
  options: { requirePersistence?: boolean; shared?: boolean } = {},
): Promise<RedisTarget> {
  const url = process.env.REDIS_URL || config?.redis.url;
  if (url) {
    registerSecret(passwordOf(url));
    if (options.requirePersistence) await checkRedisPersistence(url, config?.redis.volatile ?? false, log);
    return { url, embedded: false, stop: async () => undefined };
  }
  const dir = privateStateDir("redis");
  // An operator's command (pair, users, audit) uses the embedded Redis a running start already has.
  const running = options.shared ? runningEmbedded(dir) : undefined;
  if (running) {
    registerSecret(passwordOf(running));
    return { url: running, embedded: true, stop: async () => undefined };
  }
  const lock = await lockRedisDir(dir, log);
  let redis;
  try {
    redis = await startEmbeddedRedis({ dir, persist: true });
  } catch (err) {
    lock.release();
    throw err;
  }
  registerSecret(passwordOf(redis.url));
  writeFileSync(join(dir, PORT_FILE), String(redis.port), { mode: 0o600 });
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

/** Where a running embedded Redis' port is written, for operator commands to find it. */
const PORT_FILE = "port";

/** The url of the embedded Redis a live roomgate process runs in `dir`, if there is one. */
function runningEmbedded(dir: string): string | undefined {
  const owner = lockOwner(dir);
  if (owner === undefined || owner === process.pid) return undefined;
  try {
    process.kill(owner, 0);
    const port = Number(readFileSync(join(dir, PORT_FILE), "utf8"));
    if (!Number.isInteger(port) || port <= 0) return undefined;
    return `redis://:${embeddedRedisPassword(dir)}@127.0.0.1:${port}`;
  } catch {
    return undefined;
  }
}

function passwordOf(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}
