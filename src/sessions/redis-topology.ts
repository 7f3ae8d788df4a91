import type { Config } from "../core/config.js";

/** Where roomgate's data lives (DESIGN §10): one instance, a Cluster or a Sentinel group. */
export type RedisTopology =
  | { kind: "single"; url: string }
  | { kind: "cluster"; nodes: string[] }
  | { kind: "sentinel"; name: string; nodes: string[]; password?: string };

/** The `redis` section of the configuration. */
export type RedisConfig = Config["redis"];

/** The topology the configuration names, or undefined for the embedded default; `REDIS_URL` wins. */
export function topologyOf(
  redis: RedisConfig | undefined,
  env: NodeJS.ProcessEnv = process.env,
): RedisTopology | undefined {
  if (env.REDIS_URL) return { kind: "single", url: env.REDIS_URL };
  if (redis?.url) return { kind: "single", url: redis.url };
  if (redis?.cluster) return { kind: "cluster", nodes: redis.cluster.nodes };
  if (redis?.sentinel) {
    const { name, nodes, password } = redis.sentinel;
    return { kind: "sentinel", name, nodes, ...(password ? { password } : {}) };
  }
  return undefined;
}
