import { Cluster } from "ioredis";
import { RoomgateError } from "../core/errors.js";
import type { RedisClient } from "../sessions/redis-connection.js";

/** A write was applied on the master but fewer replicas than required acknowledged it in time. */
export class ReplicaWaitError extends RoomgateError {
  constructor(
    readonly acknowledged: number,
    readonly required: number,
  ) {
    super(`only ${acknowledged} of ${required} replicas acknowledged the write in time; it is not relied on`);
  }
}

/** How acknowledged writes are made durable: how many replicas a write's master must WAIT for. */
export interface Durability {
  timeoutMs: number;
  /**
   * The master a write whose first key is `key` goes to, the replicas it must reach, and
   * how long its WAIT may take when not `timeoutMs` (shorter while a replica is known
   * not to be in sync: every WAIT holds its connection until it times out).
   */
  required(key: string): Promise<Required>;
  /**
   * What the WAIT answered, what the write needed and (with `everyInSync`) how many
   * replicas the master had in sync when it was applied, so the count can follow the
   * master's replicas.
   */
  observe(node: string, acknowledged: number, required: number, inSync?: number): void;
}

/** What one durable write must reach. */
export interface Required {
  node: string;
  replicas: number;
  timeoutMs?: number;
  /**
   * Every replica the master has in sync when the write is applied must acknowledge it,
   * even one that joined since `replicas` was counted: the write's pipeline reads them
   * (ROLE) right after the writes. A count read a few seconds ago misses a replica that
   * has just finished its sync, and the sentinels may promote that one (measured: the
   * fault script's failback, a switchover back to the old master 17 s after it rejoined
   * as a replica, lost 4 acknowledged turns in 1 of 3 runs).
   */
  everyInSync?: boolean;
}

/** No replica is waited for (one instance, or `redis.waitReplicas: 0`). */
export const NO_WAIT: Durability = {
  timeoutMs: 0,
  required: async () => ({ node: "", replicas: 0 }),
  observe: () => undefined,
};

/**
 * True for the errors of a write that may or may not have been applied, on a master
 * that may be gone (too few replicas acknowledged, a connection lost to a failover, a
 * slot moving), or that Redis refused for now (MISCONF: it cannot write its snapshot or
 * append-only file; OOM: maxmemory reached with noeviction; a script is refused at its
 * first write, so nothing of it was applied): such a write, when idempotent, is sent again.
 */
export function isUnacknowledged(err: unknown): boolean {
  if (err instanceof ReplicaWaitError) return true;
  const message = err instanceof Error ? err.message : "";
  // "Command aborted": ioredis' answer to the rest of a pipeline whose connection closed
  // after its first replies (the script ran, its WAIT was cut off).
  return /Connection is closed|Command aborted due to connection close|ECONNREFUSED|ECONNRESET|EPIPE|CLUSTERDOWN|TRYAGAIN|MOVED|ASK |READONLY|NOREPLICAS|Failed to refresh slots|None of startup nodes|^MISCONF |^OOM command not allowed/i.test(
    message,
  );
}

/** One command of a durable write: its name on the client (a defined script's too) and its arguments. */
export type Write = readonly [command: string, ...args: (string | number)[]];

type Commands = Record<string, (...args: (string | number)[]) => unknown>;

/**
 * Sends writes that something is relied on after (a turn's step, a webhook's 202, a
 * send slot) as one pipeline to the node of `key`, followed by WAIT for the replicas
 * `durability` requires: the writes' replies once enough replicas have them, else a
 * ReplicaWaitError (the writes are on the master; the caller retries an idempotent
 * write). The script and WAIT go to one node on one connection, so WAIT covers these
 * writes. Every key the writes touch must be in the slot of `key`. A single write
 * with no replica to wait for is sent as a plain command: a pipeline object per
 * call was an eighth of a busy worker's CPU (node --cpu-prof, docs/benchmarks.md).
 */
export async function durableWrite(
  redis: RedisClient,
  durability: Durability,
  key: string,
  writes: readonly Write[],
): Promise<unknown[]> {
  const { node, replicas, timeoutMs = durability.timeoutMs, everyInSync } = await durability.required(key);
  if (replicas === 0 && writes.length === 1) {
    const [command, ...args] = writes[0]!;
    return [await (redis as unknown as Commands)[command]!.call(redis, ...args)];
  }
  const pipeline = redis.pipeline();
  for (const [command, ...args] of writes)
    (pipeline as unknown as Commands)[command]!.call(pipeline, ...args);
  const role = replicas > 0 && everyInSync === true;
  if (role) pipeline.call("ROLE");
  if (replicas > 0) pipeline.call("WAIT", replicas, timeoutMs);
  const replies = (await pipeline.exec()) ?? [];
  const inSync = role ? replicasInSync(replies[writes.length]) : 0;
  const needed = Math.max(replicas, inSync);
  // What the WAIT answered is told first, even when a write failed (NOREPLICAS): the
  // count learns of a missing replica from every attempt.
  const wait = replicas > 0 ? replies[writes.length + (role ? 1 : 0)] : undefined;
  if (wait && !wait[0]) durability.observe(node, Number(wait[1]), needed, inSync);
  for (const [err] of replies) {
    if (!err) continue;
    // ioredis follows MOVED for a pipeline only when all its commands are reads; this one
    // writes, so the slots are read again here, or every retry would go to the old master.
    if (redis instanceof Cluster && err.message.startsWith("MOVED ")) redis.refreshSlotsCache();
    throw err;
  }
  const acknowledged = Number(wait?.[1]);
  if (replicas > 0 && acknowledged < needed) throw new ReplicaWaitError(acknowledged, needed);
  return replies.slice(0, writes.length).map(([, reply]) => reply);
}

/** How many replicas a master's ROLE reply lists (Redis lists only those in sync); 0 for anything else. */
function replicasInSync(reply: [Error | null, unknown] | undefined): number {
  const role = reply?.[1];
  if (reply?.[0] || !Array.isArray(role) || role[0] !== "master" || !Array.isArray(role[2])) return 0;
  return role[2].length;
}
