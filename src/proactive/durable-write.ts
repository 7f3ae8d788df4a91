import type { ChainableCommander } from "ioredis";
import { ReplicaWaitError, type Durability } from "../queue/scheduler-scripts.js";
import type { RedisClient } from "../sessions/redis-connection.js";

/**
 * Sends writes a sender is told about (a webhook's 202) as one pipeline to the node
 * of `key`, followed by WAIT for the replicas the topology requires, as the room
 * scheduler's writes are: the replies of the writes once enough replicas have them,
 * else a ReplicaWaitError (the writes are on the master; a retry is idempotent).
 * Every key the writes touch must be in the slot of `key`.
 */
export async function durableWrite(
  redis: RedisClient,
  durability: Durability,
  key: string,
  writes: (pipeline: ChainableCommander) => ChainableCommander,
): Promise<unknown[]> {
  const { node, replicas } = await durability.required(key);
  const pipeline = writes(redis.pipeline());
  const count = pipeline.length;
  if (replicas > 0) pipeline.call("WAIT", replicas, durability.timeoutMs);
  const replies = (await pipeline.exec()) ?? [];
  for (const [err] of replies) if (err) throw err;
  if (replicas > 0) {
    const acknowledged = Number(replies[count]?.[1]);
    durability.observe(node, acknowledged, replicas);
    if (acknowledged < replicas) throw new ReplicaWaitError(acknowledged, replicas);
  }
  return replies.slice(0, count).map(([, reply]) => reply);
}
