import type { Config } from "../../core/config.js";
import { ok, problem, type Diagnosis } from "../../core/diagnosis.js";
import { RoomgateError } from "../../core/errors.js";
import { silentLogger } from "../../core/log.js";
import { assertRedisServerInstalled } from "../../sessions/embedded-redis.js";
import { RedisConnection } from "../../sessions/redis-connection.js";
import { topologyOf } from "../../sessions/redis-topology.js";
import { checkRedisPersistence } from "../../sessions/redis-persistence.js";
import { lockOwner } from "../redis-dir-lock.js";
import { stateDir } from "../paths.js";
import { join } from "node:path";

/** How long the doctor waits for an external Redis to answer. */
const CONNECT_TIMEOUT_MS = 5_000;

function reason(err: unknown): string {
  return err instanceof RoomgateError ? err.userText : (err as Error).message;
}

/** The embedded default: redis-server installed, and its data folder not held by a live roomgate. */
function checkEmbedded(): Diagnosis {
  try {
    assertRedisServerInstalled();
  } catch (err) {
    return problem(
      `redis: no redis section or REDIS_URL, and ${reason(err)}`,
      "install redis-server, or set REDIS_URL",
    );
  }
  const dir = join(stateDir(), "redis");
  const owner = lockOwner(dir);
  let live = false;
  if (owner !== undefined && owner !== process.pid) {
    try {
      process.kill(owner, 0);
      live = true;
    } catch {
      live = false;
    }
  }
  return live
    ? problem(
        `redis: the embedded Redis's data folder ${dir} is in use by a running roomgate (pid ${owner})`,
        "stop it first, or give this one its own ROOMGATE_STATE_DIR",
      )
    : ok(`redis: the embedded redis-server will start with its data in ${dir}`);
}

/**
 * Redis as start would use it: an external one (REDIS_URL or the `redis` section)
 * reachable with its password and persisting (or `volatile: true`), a replica given
 * as `url` refused; or the embedded default startable.
 */
export async function checkRedis(config: Config): Promise<Diagnosis[]> {
  const topology = topologyOf(config.redis);
  if (!topology) return [checkEmbedded()];
  const connection = new RedisConnection(topology, 0, 1000);
  try {
    await connection.ready(CONNECT_TIMEOUT_MS);
  } catch (err) {
    connection.close();
    return [
      problem(
        `${connection.describe()}: not reachable: ${reason(err)}`,
        "start it, or fix REDIS_URL / the redis section (address, password, TLS)",
      ),
    ];
  }
  try {
    await checkRedisPersistence(connection, config.redis.volatile, silentLogger());
    return [
      ok(
        `${connection.describe()}: reachable${config.redis.volatile ? " (volatile: persistence not required)" : ", persists its data"}`,
      ),
    ];
  } catch (err) {
    return [
      problem(
        `${connection.describe()}: ${reason(err)}`,
        "turn on appendonly (CONFIG SET appendonly yes, and in redis.conf), or accept the loss with redis.volatile: true",
      ),
    ];
  } finally {
    connection.close();
  }
}
