import { Redis } from "ioredis";
import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";

/** An external Redis keeps nothing across a restart, and the configuration did not accept that. */
export class RedisPersistenceError extends RoomgateError {}

const WHY =
  "roomgate keeps every queued turn, session and delivery record only in Redis; " +
  "a Redis that does not persist loses them on a restart (turns already confirmed to the platform are never answered)";

function flat(reply: unknown): string[] {
  return Array.isArray(reply) ? reply.map(String) : [];
}

/**
 * Checks that an external Redis persists its data (append-only file, or RDB
 * snapshots), and refuses to run on one that does not unless `redis.volatile: true`
 * says the operator accepts losing queued turns on a Redis restart.
 */
export async function checkRedisPersistence(url: string, volatile: boolean, log: Logger): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  redis.on("error", () => undefined);
  let appendonly: string | undefined;
  let save: string | undefined;
  let problem: string | undefined;
  try {
    await redis.connect();
    appendonly = flat(await redis.config("GET", "appendonly"))[1];
    save = flat(await redis.config("GET", "save"))[1];
  } catch (err) {
    problem = (err as Error).message;
  } finally {
    redis.disconnect();
  }
  const persists = appendonly === "yes" || (save !== undefined && save.trim() !== "");
  if (persists) return;
  const found =
    problem !== undefined
      ? `its persistence settings could not be read (${problem})`
      : `it has appendonly "${appendonly ?? "?"}" and save "${save ?? ""}"`;
  if (volatile) {
    log.warn({ appendonly, save, problem }, "redis does not persist; running anyway (redis.volatile: true)");
    return;
  }
  throw new RedisPersistenceError(
    `the Redis at redis.url/REDIS_URL may not persist: ${found}. ${WHY}. ` +
      "Turn on `appendonly yes` (or RDB `save`), or set `redis.volatile: true` to run without it.",
  );
}
