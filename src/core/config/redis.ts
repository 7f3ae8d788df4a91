import { z } from "zod";

/** A Redis node as a URL: `redis://` or `rediss://` (TLS), with the password (and user) as userinfo. */
const RedisNodeUrlSchema = z
  .string()
  .regex(/^rediss?:\/\/[^/]+/, "must be a redis:// or rediss:// URL with a host and port");

/**
 * The `redis` section: where state lives — one instance (`url`), a Redis Cluster
 * (`cluster.nodes`) or a Sentinel group (`sentinel`); with none the embedded default runs.
 */
export const RedisSchema = z
  .strictObject({
    /** One Redis instance (the master: a replica is refused). */
    url: z.string().optional(),
    /** A Redis Cluster: some of its nodes; the rest are found from them. */
    cluster: z.strictObject({ nodes: z.array(RedisNodeUrlSchema).min(1) }).optional(),
    /** A Sentinel group: the master's name and sentinel addresses; `password` is the sentinels' own. */
    sentinel: z
      .strictObject({
        name: z.string().min(1),
        nodes: z.array(RedisNodeUrlSchema).min(1),
        password: z.string().optional(),
      })
      .optional(),
    prefix: z.string().min(1).default("rg"),
    /** Run on an external Redis without persistence, accepting that a restart loses queued turns. */
    volatile: z.boolean().default(false),
    /**
     * Acknowledged writes wait for this many replicas (Redis WAIT) before roomgate relies
     * on them; "auto": every replica the master has (at least one where the topology has any).
     */
    waitReplicas: z.union([z.literal("auto"), z.number().int().nonnegative()]).default("auto"),
    /** How long one WAIT may take, in seconds, before the write counts as not acknowledged (and is retried). */
    waitTimeoutSeconds: z.number().positive().default(1),
    /**
     * A Redis client that has completed no command for this long is replaced with a new
     * one; when the new one does not answer within as long either, the process exits
     * non-zero for its supervisor to restart it. Longer than the topology takes to
     * promote a new master, so that a failover is waited out, not restarted through.
     */
    deadAfterSeconds: z.number().positive().default(30),
    /**
     * The embedded Redis' memory cap (used when none of url, cluster and sentinel is
     * given), in MB, with `noeviction`: at the cap new writes are refused, nothing stored
     * is dropped.
     */
    embeddedMaxMemoryMb: z.number().int().positive().default(512),
  })
  .refine((r) => [r.url, r.cluster, r.sentinel].filter((v) => v !== undefined).length <= 1, {
    message: "give at most one of url, cluster and sentinel",
  })
  .prefault({});
