import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { RedisClient } from "./redis-connection.js";
import { nodeLogin, parseNode } from "./redis-node-url.js";
import { FollowingRedis } from "./switch-follower.js";
import type { RedisTopology } from "./redis-topology.js";

/**
 * Reconnect (and resend) when a node answers READONLY: it was demoted to a replica
 * by a failover, and the client must find the new master instead of writing on.
 */
function reconnectOnReadonly(err: Error): 2 | false {
  return err.message.startsWith("READONLY") ? 2 : false;
}

/** Options every roomgate connection shares: commands wait through reconnects instead of failing. */
const COMMON: RedisOptions = {
  maxRetriesPerRequest: null,
  reconnectOnError: reconnectOnReadonly,
  retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
};

/**
 * How long a sentinel may take to answer the client's question for the master: without
 * a limit, a hung sentinel holds a reconnecting client forever.
 */
const SENTINEL_COMMAND_MS = 3000;

/**
 * How long a Sentinel client's old master connection may take to close after a
 * `+switch-master` (FollowingRedis) before it is destroyed: ioredis ends it gracefully, and a hung
 * master (no RST) never completes that; ioredis' default 2 s was 2 s more of no
 * answers after every failover. A live old master answers what is in flight well
 * within this.
 */
const SWITCH_CLOSE_MS = 500;

/**
 * A new ioredis client for `topology` with `extra` options on top of the shared ones:
 * an ioredis Cluster (routing by slot, following MOVED) for a Cluster, a Sentinel-aware
 * client (following the master, reconnecting on READONLY) for a Sentinel group.
 */
export function buildClient(topology: RedisTopology, extra: RedisOptions): RedisClient {
  const t = topology;
  if (t.kind === "single") {
    const node = parseNode(t.url);
    return new Redis({ ...COMMON, ...extra, ...nodeLogin(node) });
  }
  if (t.kind === "cluster") {
    const nodes = t.nodes.map(parseNode);
    const login = nodeLogin(nodes[0]!);
    const { enableOfflineQueue, lazyConnect, ...redisOptions } = { ...COMMON, ...extra, ...login };
    const options: ClusterOptions = {
      redisOptions: { ...redisOptions, host: undefined, port: undefined } as ClusterOptions["redisOptions"],
      scaleReads: "master",
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 300,
      retryDelayOnTryAgain: 100,
      maxRedirections: 32,
      slotsRefreshTimeout: 2000,
      clusterRetryStrategy: (times) => Math.min(100 * times, 2000),
      ...(enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
      ...(lazyConnect ? { lazyConnect: true } : {}),
    };
    return new Cluster(
      nodes.map((n) => ({ host: n.host, port: n.port })),
      options,
    );
  }
  const sentinels = t.nodes.map(parseNode);
  const login = sentinels.find((n) => n.password !== undefined) ?? sentinels[0]!;
  const tls = sentinels.some((n) => n.tls);
  const group = {
    name: t.name,
    sentinels: sentinels.map((n) => ({ host: n.host, port: n.port })),
    ...(t.password ? { password: t.password } : {}),
    tls,
  };
  return new FollowingRedis(
    {
      ...COMMON,
      ...extra,
      sentinels: group.sentinels,
      name: t.name,
      ...(login.username ? { username: login.username } : {}),
      ...(login.password ? { password: login.password } : {}),
      ...(t.password ? { sentinelPassword: t.password } : {}),
      ...(tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
      // The sentinels' announcements are followed by FollowingRedis, not ioredis' detector.
      failoverDetector: false,
      disconnectTimeout: SWITCH_CLOSE_MS,
      sentinelCommandTimeout: SENTINEL_COMMAND_MS,
      sentinelRetryStrategy: (times) => Math.min(100 * times, 2000),
    },
    group,
  );
}
