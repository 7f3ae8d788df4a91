import { Cluster, type Redis } from "ioredis";
import type { RedisClient } from "./redis-connection.js";

/** Each master of the client (one for a single instance or Sentinel), to run a command on every one. */
export function mastersOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes("master") : [client];
}

/** The masters' connected-replica counts, from INFO replication (one per master of a cluster). */
export async function replicaCounts(client: RedisClient): Promise<number[]> {
  return Promise.all(
    mastersOf(client).map(async (node) => {
      const info = await node.info("replication");
      return Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? 0);
    }),
  );
}

/** Every key matching `pattern` on every master (SCAN, never KEYS). */
export async function scanAll(client: RedisClient, pattern: string, limit = Infinity): Promise<string[]> {
  const found: string[] = [];
  for (const node of mastersOf(client)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0" && found.length < limit);
  }
  return found;
}
