import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Cluster } from "ioredis";
import { RedisClusterTopology } from "../../bench/support/redis-topology.js";
import { silentLogger } from "../../src/core/log.js";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { Keys } from "../../src/sessions/keys.js";
import { RedisConnection, type RedisClient } from "../../src/sessions/redis-connection.js";
import { testRedis } from "./redis.js";

/** Which Redis a test that can run on either gets: `ROOMGATE_TEST_TOPOLOGY=cluster` picks a Cluster. */
export type TestTopologyKind = "single" | "cluster";

/**
 * A Redis for tests that run the same on one instance and on a Cluster: the run's
 * redis-server under a random prefix, or a real Cluster of its own (3 masters with a
 * replica each, loopback, free ports) that `cleanup` stops.
 */
export interface TestTopology {
  kind: TestTopologyKind;
  /** A client for the test's own reads (an ioredis Cluster on a cluster). */
  redis: RedisClient;
  /** The connection factory a runtime is given (replica waits resolved as `start` does). */
  connection: RedisConnection;
  prefix: string;
  keys: Keys;
  /** The scheduler's keys under `prefix` (tests read them). */
  schedulerKeys: SchedulerKeys;
  /** The `redis:` section of a configuration file for this Redis. */
  config: Record<string, unknown>;
  /** The cluster's nodes, when it is one. */
  cluster?: RedisClusterTopology;
  /** Keys matching a pattern, on every master. */
  keysMatching(pattern: string): Promise<string[]>;
  cleanup(): Promise<void>;
}

/** Starts (or connects to) the Redis of `kind`, by default from `ROOMGATE_TEST_TOPOLOGY`. */
export async function testTopology(
  kind: TestTopologyKind = process.env.ROOMGATE_TEST_TOPOLOGY === "cluster" ? "cluster" : "single",
): Promise<TestTopology> {
  if (kind === "single") {
    const db = await testRedis();
    return {
      kind,
      redis: db.redis,
      connection: db.connection,
      prefix: db.prefix,
      keys: db.keys,
      schedulerKeys: db.schedulerKeys,
      config: { url: db.url, prefix: db.prefix },
      keysMatching: (pattern) => db.redis.keys(pattern),
      cleanup: () => db.cleanup(),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "rg-test-cluster-"));
  const cluster = await RedisClusterTopology.start({ dir });
  const connection = new RedisConnection({ kind: "cluster", nodes: cluster.urls });
  await connection.resolveWait("auto", silentLogger());
  const redis = connection.client as Cluster;
  const prefix = `t${randomBytes(5).toString("hex")}`;
  return {
    kind,
    redis,
    connection,
    prefix,
    keys: new Keys(prefix),
    schedulerKeys: new SchedulerKeys(prefix),
    config: { cluster: { nodes: cluster.urls }, prefix },
    cluster,
    async keysMatching(pattern) {
      const found = await Promise.all(redis.nodes("master").map((node) => node.keys(pattern)));
      return found.flat();
    },
    async cleanup() {
      connection.close();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
