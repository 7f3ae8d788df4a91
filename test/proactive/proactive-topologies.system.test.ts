import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RedisClusterTopology, RedisSentinelTopology } from "../../bench/support/redis-topology.js";
import { ConfigSchema } from "../../src/core/config.js";
import { InboundEventSchema } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { signHook } from "../../src/proactive/hook-signature.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { Keys } from "../../src/sessions/keys.js";
import { RedisConnection, type RedisClient } from "../../src/sessions/redis-connection.js";
import type { RedisServer } from "../../src/sessions/redis-server.js";
import { demoNamespaces } from "../support/spine.js";
import { waitFor } from "../support/wait.js";

/**
 * The short topology check of the proactive parts (`npm test`): bullmq's job scheduler
 * under `<prefix>:{proactive}` fires once per period on a real 3-master Cluster and
 * behind Sentinel (through a SENTINEL FAILOVER), and a webhook's 202 comes only once
 * its event is on the replicas too. Nobody serves the terminal room, so the fires
 * and the delivery stay in its inbox to be counted.
 */
const PERIOD_MS = 1000;
const ROOM = "shell:topology";
const SECRET = "topology-hook-secret-0123456789";
const PREFIX = "rgtopo";
const keys = new Keys(PREFIX);
const schedulerKeys = new SchedulerKeys(PREFIX);
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function roomgateOn(connection: RedisConnection): Promise<Runtime> {
  const config = ConfigSchema.parse({
    redis: { prefix: PREFIX },
    namespaces: demoNamespaces({}, ["feed"]).config.namespaces,
    http: { port: 0 },
    schedules: [{ name: "tick", room: ROOM, namespace: "feed", every: "1s", ask: "what is new?" }],
    hooks: [
      { name: "ci", room: ROOM, namespace: "feed", secret: SECRET, ask: "why did {{ body.run }} fail?" },
    ],
  });
  const runtime = await startRuntime({
    config,
    redis: connection,
    prefix: PREFIX,
    log: silentLogger(),
    platforms: [],
  });
  cleanups.push(() => runtime.stop(0));
  return runtime;
}

/** The proactive events queued in the room (as `redis` reads them: a master, or a replica). */
async function queued(redis: RedisClient): Promise<{ ticks: number[]; hooks: string[] }> {
  const ticks: number[] = [];
  const hooks: string[] = [];
  for (const raw of await redis.lrange(schedulerKeys.inbox(ROOM), 0, -1)) {
    const event = InboundEventSchema.parse(JSON.parse(raw));
    if (event.kind !== "proactive") continue;
    if (event.source.type === "schedule") ticks.push(event.source.at);
    else hooks.push(event.text);
  }
  return { ticks: ticks.sort((a, b) => a - b), hooks };
}

/**
 * Waits until `n` periods after the last fire so far have fired too, then checks that
 * every fire so far is one period after the one before. A fire may come late (its
 * enqueue waited for replicas in vain and bullmq retries it, or its job is taken back
 * from a lost lock), never twice and never not at all.
 */
async function ticksGoOn(redis: RedisClient, n: number): Promise<number[]> {
  // Counted from a fire, never from this process's clock: from "now", one late first fire
  // could already be n periods on and end the wait with nothing to compare it with.
  await waitFor(async () => (await queued(redis)).ticks.length > 0, 30_000, "a first fire");
  const last = (await queued(redis)).ticks.at(-1)!;
  const until = last + n * PERIOD_MS;
  const contiguous = (ticks: number[]) =>
    ticks.at(-1)! >= until && ticks.length === (ticks.at(-1)! - ticks[0]!) / PERIOD_MS + 1;
  await waitFor(
    async () => contiguous((await queued(redis)).ticks),
    30_000,
    `every fire up to ${until}`,
  ).catch(() => undefined);
  const { ticks } = await queued(redis);
  expect(new Set(ticks).size, ticks.join(", ")).toBe(ticks.length);
  expect(new Set(ticks.slice(1).map((t, i) => t - ticks[i]!)), ticks.join(", ")).toEqual(
    new Set([PERIOD_MS]),
  );
  expect(ticks.at(-1)).toBeGreaterThanOrEqual(until);
  return ticks;
}

/**
 * Posts a signed delivery as a sender does: again (same delivery id) after a 503,
 * which roomgate answers when Redis or its replicas did not take the event in time.
 * Resolves with every status it got.
 */
async function deliver(runtime: Runtime, delivery: string, run: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    statuses.push(await post(runtime, delivery, run));
    if (statuses.at(-1) !== 503) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return statuses;
}

/** Accepted: 202, or, after a 503 whose event Redis had taken, 200 (a duplicate, replicated by then). */
function accepted(statuses: number[]): boolean {
  const last = statuses.at(-1);
  return last === 202 || (last === 200 && statuses.includes(503));
}

/** Posts a signed delivery once; resolves with its status. */
async function post(runtime: Runtime, delivery: string, run: string): Promise<number> {
  const body = JSON.stringify({ run });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`http://127.0.0.1:${runtime.health!.port}/hooks/ci`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-roomgate-timestamp": timestamp,
      "x-roomgate-signature": signHook(SECRET, timestamp, body),
      "x-roomgate-delivery": delivery,
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

async function onReplica(node: RedisServer, read: (client: RedisClient) => Promise<string[]>) {
  const client = node.client();
  try {
    return await read(client);
  } finally {
    client.disconnect();
  }
}

describe.concurrent("proactive jobs and webhooks on real topologies", () => {
  describe("on a Redis Cluster (3 masters, a replica each)", () => {
    it("fires once per period from one slot, and answers a hook 202 once its event is on the replica", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rg-proactive-cluster-"));
      const cluster = await RedisClusterTopology.start({ dir });
      cleanups.push(async () => {
        await cluster.stop();
        rmSync(dir, { recursive: true, force: true });
      });
      const connection = new RedisConnection({ kind: "cluster", nodes: cluster.urls.slice(0, 2) });
      cleanups.push(async () => connection.close());
      await connection.resolveWait("auto", silentLogger());
      expect(connection.waitReplicas).toBe(1);
      const runtime = await roomgateOn(connection);
      const redis = connection.client;

      await ticksGoOn(redis, 3);
      // Every key of the queue is in the one `{proactive}` slot, on one master.
      const masters = await cluster.masters();
      const holding = await Promise.all(
        masters.map((m) =>
          onReplica(
            m,
            async (c) => (await c.scan("0", "MATCH", `${PREFIX}:{proactive}:*`, "COUNT", 10_000))[1],
          ),
        ),
      );
      expect(holding.filter((found) => found.length > 0)).toHaveLength(1);
      expect(await redis.zscore(`${keys.bullmqPrefix}:jobs:repeat`, "cfg.tick")).not.toBeNull();

      expect(accepted(await deliver(runtime, "d-1", "cluster-build"))).toBe(true);
      // Read at once from the replicas (READONLY): the room's one has the event already.
      const replicas = cluster.nodes.filter((n) => !masters.includes(n));
      const copies = await Promise.all(
        replicas.map((r) =>
          onReplica(r, async (c) => {
            await c.call("READONLY");
            return c.lrange(schedulerKeys.inbox(ROOM), 0, -1).catch(() => [] as string[]);
          }),
        ),
      );
      expect(copies.flat().filter((raw) => raw.includes("cluster-build"))).toHaveLength(1);
      expect(await deliver(runtime, "d-1", "cluster-build")).toEqual([200]);
      await ticksGoOn(redis, 2);
      expect((await queued(redis)).hooks).toEqual(["why did cluster-build fail?"]);
    }, 60_000);
  });

  describe("behind Sentinel (1 master, 2 replicas, 3 sentinels)", () => {
    it("fires once per period through a SENTINEL FAILOVER, and answers a hook 202 once its event is on every replica", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rg-proactive-sentinel-"));
      const group = await RedisSentinelTopology.start({ dir, replicas: 2, sentinels: 3 });
      cleanups.push(async () => {
        await group.stop();
        rmSync(dir, { recursive: true, force: true });
      });
      const connection = new RedisConnection({ kind: "sentinel", name: group.name, nodes: group.urls });
      cleanups.push(async () => connection.close());
      await connection.resolveWait("auto", silentLogger());
      const runtime = await roomgateOn(connection);
      const redis = connection.client;

      await ticksGoOn(redis, 2);
      const old = await group.master();
      expect(accepted(await deliver(runtime, "d-1", "before-failover"))).toBe(true);
      const replicas = group.data.filter((d) => d !== old);
      for (const replica of replicas) {
        const copy = await onReplica(replica, (c) => c.lrange(schedulerKeys.inbox(ROOM), 0, -1));
        expect(copy.filter((raw) => raw.includes("before-failover"))).toHaveLength(1);
      }

      await group.failover();
      expect(await group.promotedFrom(old)).not.toBe(old);
      await ticksGoOn(redis, 3);
      expect(accepted(await deliver(runtime, "d-2", "after-failover"))).toBe(true);
      expect(await deliver(runtime, "d-1", "before-failover")).toEqual([200]);
      expect((await queued(redis)).hooks).toEqual([
        "why did before-failover fail?",
        "why did after-failover fail?",
      ]);
    }, 60_000);
  });
});
