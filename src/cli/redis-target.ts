import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { embeddedRedisPassword, startEmbeddedRedis } from "../sessions/embedded-redis.js";
import { RedisConnection } from "../sessions/redis-connection.js";
import { topologyOf } from "../sessions/redis-topology.js";
import { checkRedisPersistence } from "../sessions/redis-persistence.js";
import { privateStateDir } from "./paths.js";
import { lockOwner, lockRedisDir } from "./redis-dir-lock.js";

/** How long a command waits for an external Redis to answer at start before it says so and stops. */
const CONNECT_TIMEOUT_MS = 5_000;

/** The Redis a command uses, and how to let go of it. */
export interface RedisTarget {
  connection: RedisConnection;
  embedded: boolean;
  /** Closes the connection's clients and stops the embedded server, if any. */
  stop(): Promise<void>;
}

/**
 * The one way every command (start, worker, shell, dead-letters, check) gets its
 * Redis: `REDIS_URL`, else `redis.url`, `redis.cluster` or `redis.sentinel` from the
 * config, else the embedded default: a private redis-server with append-only data
 * under the state folder (DESIGN §10). The embedded server never outlives this
 * process: it is stopped on every exit path, and one left by a killed process is
 * stopped by the next start. With `requirePersistence` (start, worker), every node of
 * an external Redis must persist its data unless `redis.volatile` is set, and a
 * replica given as `url` is refused. Acknowledged writes wait for replicas as
 * `redis.waitReplicas` says.
 */
export async function resolveRedis(
  config: Config | undefined,
  log: Logger,
  options: { requirePersistence?: boolean; shared?: boolean } = {},
): Promise<RedisTarget> {
  const topology = topologyOf(config?.redis);
  if (topology) {
    const connection = new RedisConnection(
      topology,
      0,
      Math.round((config?.redis.waitTimeoutSeconds ?? 1) * 1000),
    );
    try {
      await connection.ready(CONNECT_TIMEOUT_MS);
      if (options.requirePersistence)
        await checkRedisPersistence(connection, config?.redis.volatile ?? false, log);
      const replicas = await connection.resolveWait(config?.redis.waitReplicas ?? "auto", log);
      log.info({ redis: connection.describe(), waitReplicas: replicas }, "redis connected");
    } catch (err) {
      connection.close();
      throw err;
    }
    return { connection, embedded: false, stop: async () => connection.close() };
  }
  const dir = privateStateDir("redis");
  // An operator's command (pair, users, audit) uses the embedded Redis a running start already has.
  const running = options.shared ? runningEmbedded(dir) : undefined;
  if (running) {
    const connection = RedisConnection.single(running);
    return { connection, embedded: true, stop: async () => connection.close() };
  }
  const lock = await lockRedisDir(dir, log);
  let redis;
  try {
    redis = await startEmbeddedRedis({
      dir,
      persist: true,
      ...(config ? { maxMemoryMb: config.redis.embeddedMaxMemoryMb } : {}),
    });
  } catch (err) {
    lock.release();
    throw err;
  }
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
  // `redisPid`: pino already names this process's own `pid` on every line.
  log.info({ port: redis.port, dir, redisPid: pid }, "embedded redis-server started");
  const started = redis;
  const connection = RedisConnection.single(started.url);
  return {
    connection,
    embedded: true,
    stop: async () => {
      connection.close();
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
