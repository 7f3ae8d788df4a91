import { Cluster, Redis } from "ioredis";
import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import type { RedisConnection } from "./redis-connection.js";
import { addressOf } from "./redis-node-url.js";

/** An external Redis keeps nothing across a restart, and the configuration did not accept that. */
export class RedisPersistenceError extends RoomgateError {}

/** `redis.url` names a replica: writes would fail, or be lost when it resyncs. */
export class RedisReplicaError extends RoomgateError {}

const WHY =
  "roomgate keeps every queued turn, session and delivery record only in Redis; " +
  "a Redis that does not persist loses them on a restart (turns already confirmed to the platform are never answered)";

function flat(reply: unknown): string[] {
  return Array.isArray(reply) ? reply.map(String) : [];
}

/** One node's persistence settings, or why they could not be read. */
interface NodeSettings {
  node: string;
  role: string;
  appendonly?: string;
  save?: string;
  /** `cluster-require-full-coverage` (a Cluster node's). */
  fullCoverage?: string;
  problem?: string;
}

async function settingsOf(node: Redis, name: string): Promise<NodeSettings> {
  try {
    const info = await node.info("replication");
    const role = /role:(\w+)/.exec(info)?.[1] ?? "?";
    const appendonly = flat(await node.config("GET", "appendonly"))[1];
    const save = flat(await node.config("GET", "save"))[1];
    const fullCoverage = flat(await node.config("GET", "cluster-require-full-coverage"))[1];
    return {
      node: name,
      role,
      ...(appendonly !== undefined ? { appendonly } : {}),
      ...(save !== undefined ? { save } : {}),
      ...(fullCoverage !== undefined ? { fullCoverage } : {}),
    };
  } catch (err) {
    return { node: name, role: "?", problem: (err as Error).message };
  }
}

function persists(s: NodeSettings): boolean {
  return s.appendonly === "yes" || (s.save !== undefined && s.save.trim() !== "");
}

/** Every node whose data roomgate's state may end up on: each master and each replica. */
async function nodesOf(connection: RedisConnection): Promise<{ node: Redis; name: string; own: boolean }[]> {
  const client = await connection.ready();
  if (client instanceof Cluster) {
    // Every node the cluster knows, replicas included (the client itself talks to masters only).
    const listing = String(await client.nodes("master")[0]!.call("CLUSTER", "NODES"));
    const login = client.options.redisOptions ?? {};
    return listing
      .split("\n")
      .map((line) => line.split(" "))
      .filter((f) => f.length > 2 && !f[2]!.includes("fail") && !f[2]!.includes("noaddr"))
      .map((f) => {
        const address = f[1]!.split("@")[0]!;
        const role = f[2]!.includes("master") ? "master" : "replica";
        return { node: nodeAt(address, login), name: `${role} ${address}`, own: true };
      });
  }
  if (connection.topology.kind !== "sentinel")
    return [{ node: client, name: connection.describe(), own: false }];
  // The master the Sentinel group names (the client is connected to it) and its replicas, each on its own.
  const info = await client.info("replication");
  const replicas = [...info.matchAll(/^slave\d+:ip=([^,]+),port=(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`);
  return [
    { node: client, name: `master ${connection.topology.name}`, own: false },
    ...replicas.map((address) => ({
      node: nodeAt(address, client.options),
      name: `replica ${address}`,
      own: true,
    })),
  ];
}

/** A plain client of one node at `host:port`, logging in as the topology's clients do. */
function nodeAt(address: string, login: { username?: string; password?: string; tls?: unknown }): Redis {
  const at = address.lastIndexOf(":");
  const node = new Redis({
    host: address.slice(0, at),
    port: Number(address.slice(at + 1)),
    ...(login.username ? { username: login.username } : {}),
    ...(login.password ? { password: login.password } : {}),
    ...(login.tls ? { tls: login.tls as object } : {}),
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
  });
  node.on("error", () => undefined);
  return node;
}

/**
 * Checks that every node holding roomgate's data persists it (append-only file, or
 * RDB snapshots) — each master and replica of a cluster, the master a Sentinel group
 * names and its replicas, or the one instance — and refuses to run on one that does
 * not unless `redis.volatile: true` says the operator accepts losing queued turns on
 * a Redis restart. A `redis.url` that names a replica is refused outright.
 */
export async function checkRedisPersistence(
  connection: RedisConnection,
  volatile: boolean,
  log: Logger,
): Promise<void> {
  let settings: NodeSettings[];
  try {
    const nodes = await nodesOf(connection);
    settings = await Promise.all(nodes.map(({ node, name }) => settingsOf(node, name)));
    for (const n of nodes) if (n.own) n.node.disconnect();
  } catch (err) {
    settings = [{ node: connection.describe(), role: "?", problem: (err as Error).message }];
  }
  const single = connection.topology;
  if (single.kind === "single" && settings[0]?.role === "slave") {
    throw new RedisReplicaError(
      `redis.url/REDIS_URL (${addressOf(single.url)}) is a replica: roomgate must write to the master. ` +
        "Give the master's address, or `redis.sentinel` to follow whichever node is master.",
    );
  }
  const stopsAll = settings.filter((s) => s.fullCoverage === "yes").map((s) => s.node);
  if (single.kind === "cluster" && stopsAll.length > 0)
    log.warn(
      { nodes: stopsAll.join("; ") },
      "redis cluster: cluster-require-full-coverage is yes, so while one slot range is down (its master and replicas) " +
        "Redis refuses every slot and every room waits; set it to no so that only that range's rooms wait (docs/reliability.md)",
    );
  const bad = settings.filter((s) => !persists(s));
  if (bad.length === 0) return;
  const found = bad
    .map((s) =>
      s.problem !== undefined
        ? `${s.node}: its persistence settings could not be read (${s.problem})`
        : `${s.node}: appendonly "${s.appendonly ?? "?"}" and save "${s.save ?? ""}"`,
    )
    .join("; ");
  if (volatile) {
    log.warn({ nodes: found }, "redis does not persist; running anyway (redis.volatile: true)");
    return;
  }
  throw new RedisPersistenceError(
    `the Redis roomgate would use (${connection.describe()}) may not persist: ${found}. ${WHY}. ` +
      "Turn on `appendonly yes` (or RDB `save`) on every node, or set `redis.volatile: true` to run without it.",
  );
}
