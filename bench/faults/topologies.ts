import { join } from "node:path";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { spawnTracked } from "../support/processes.js";
import { RedisClusterTopology, RedisSentinelTopology } from "../support/redis-topology.js";

/** Where the fault script's Redis runs: one instance, a Cluster, or a Sentinel group. */
export const TOPOLOGIES = ["single", "cluster", "sentinel"] as const;
export type Topology = (typeof TOPOLOGIES)[number];

/** The faults each topology runs by default. */
export const TOPOLOGY_SCENARIOS: Record<Topology, string[]> = {
  single: ["kill", "redis", "namespace", "poison", "429", "outage", "client-pause", "oom", "misconf"],
  cluster: [
    "failover",
    "cluster-failover",
    "range-down",
    "range-down-other",
    "reshard",
    "replica-stall",
    "client-pause",
  ],
  sentinel: ["switchover", "master-kill", "hung-master", "master-sentinel-kill", "failback", "replica-stall"],
};

/**
 * A running Redis of one topology for one fault run: the `redis` section roomgate's
 * config gets, and what the Redis faults act on.
 */
export interface FaultRedis {
  topology: Topology;
  /** The `redis` section of roomgate's config (prefix added by the fleet). */
  config: Record<string, unknown>;
  /** The single instance (the "redis" restart fault). */
  single?: RedisServer;
  cluster?: RedisClusterTopology;
  sentinel?: RedisSentinelTopology;
  stop(): Promise<void>;
}

/**
 * Lines every data node of the topologies gets beyond persistence: a master that has
 * lost every replica for 10 s stops taking writes (`min-replicas-to-write`), so an old
 * master cut off by a failover cannot keep acknowledging what the new one never sees.
 */
const MIN_REPLICAS = ["min-replicas-to-write 1", "min-replicas-max-lag 10"];

/**
 * Starts the topology's Redis in `dir` on free loopback ports; a Sentinel group's
 * sentinels take a master for down after `downAfterMs`.
 */
export async function startFaultRedis(
  topology: Topology,
  dir: string,
  downAfterMs = 1000,
): Promise<FaultRedis> {
  if (topology === "single") {
    const single = await RedisServer.start({ dir: join(dir, "redis"), spawn: spawnTracked });
    return { topology, config: { url: single.url }, single, stop: () => single.stop() };
  }
  if (topology === "cluster") {
    const cluster = await RedisClusterTopology.start({
      dir: join(dir, "cluster"),
      masters: 3,
      replicas: 1,
      spawn: spawnTracked,
    });
    return { topology, config: { cluster: { nodes: cluster.urls } }, cluster, stop: () => cluster.stop() };
  }
  const sentinel = await RedisSentinelTopology.start({
    dir: join(dir, "sentinel"),
    replicas: 2,
    sentinels: 3,
    config: MIN_REPLICAS,
    downAfterMs,
    spawn: spawnTracked,
  });
  return {
    topology,
    config: { sentinel: { name: sentinel.name, nodes: sentinel.urls } },
    sentinel,
    stop: () => sentinel.stop(),
  };
}
