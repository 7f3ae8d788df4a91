import { Cluster, Redis } from "ioredis";
import type { RedisClient } from "../sessions/redis-connection.js";

/** A replica by address (`host:port`), as a master's INFO and the topology name it. */
export type ReplicaAddress = string;

/** What the topology says about one master's replicas, right now. */
export interface ReplicaReport {
  /** Replicas connected to the master and in sync (INFO replication `state=online`). */
  online: ReplicaAddress[];
  /**
   * Replicas the topology counts as alive for this master (not failed, not down), online
   * or not: one that is alive but not online is lagging, resyncing or being attached.
   */
  alive: ReplicaAddress[];
  /**
   * A failover is under way or was just made (a sentinel has the master down or a
   * failover in progress, or names another master; the cluster has moved the master's
   * slots or does not yet agree a missing replica failed), or the topology could not be
   * asked: nothing about a missing replica may be concluded now.
   */
  unsettled: boolean;
}

/** How a topology is asked about a master's replicas (one per kind of topology). */
export interface ReplicaView {
  /** The master that serves `node` ("master" for a single instance or a Sentinel group). */
  report(client: RedisClient, node: string): Promise<ReplicaReport>;
}

/** The replicas a master's `INFO replication` lists as online, by address. */
export function onlineReplicas(info: string): ReplicaAddress[] {
  return listedReplicas(info, (state) => state === "online");
}

/** The replicas a master's `INFO replication` lists in a state `keep` accepts, by address. */
function listedReplicas(info: string, keep: (state: string) => boolean): ReplicaAddress[] {
  return [...info.matchAll(/^slave\d+:ip=([^,]+),port=(\d+),state=(\w+)/gm)]
    .filter((m) => keep(m[3]!))
    .map((m) => `${m[1]}:${m[2]}`);
}

/** The Redis client of a cluster's master `node` (`host:port`), or the client itself. */
function masterClient(client: RedisClient, node: string): Redis | undefined {
  if (!(client instanceof Cluster)) return client;
  return client.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === node);
}

/**
 * One instance named by `redis.url`: nothing promotes its replicas on its own, so a
 * replica that left the master's INFO is gone until it comes back. One the INFO lists
 * in any state is alive: a replica still loading its first sync (`wait_bgsave`,
 * `send_bulk`, or done but not yet acknowledged) is waited for, not taken for none
 * (a write acknowledged then was on no replica yet).
 */
export const SINGLE_VIEW: ReplicaView = {
  async report(client) {
    const info = await (client as Redis).info("replication");
    return {
      online: onlineReplicas(info),
      alive: listedReplicas(info, () => true),
      unsettled: !/role:master/.test(info),
    };
  },
};

/**
 * A Redis Cluster: the master's own `CLUSTER NODES` view. A replica flagged `fail` (a
 * majority of masters agreed) is gone; one flagged `fail?` is suspected by this node
 * only (unsettled until the cluster agrees); a master whose slots went to another
 * node, or that the cluster calls failed, is being replaced (unsettled). A master
 * promoted in a failover whose old master is down has no replica at all.
 */
export const CLUSTER_VIEW: ReplicaView = {
  async report(client, node) {
    const master = masterClient(client, node);
    if (!master) return { online: [], alive: [], unsettled: true };
    const [info, nodes] = await Promise.all([
      master.info("replication"),
      master.call("CLUSTER", "NODES") as Promise<string>,
    ]);
    const lines = nodes
      .trim()
      .split("\n")
      .map((l) => l.trim().split(" "));
    const me = lines.find((f) => f[2]?.split(",").includes("myself"));
    const myFlags = me?.[2]?.split(",") ?? [];
    const replicas = lines.filter((f) => f[3] === me?.[0] && f[2]?.split(",").includes("slave"));
    const address = (f: string[]) => f[1]!.split("@")[0]!;
    const alive = replicas.filter((f) => !f[2]!.split(",").includes("fail")).map(address);
    const suspected = replicas.some((f) => f[2]!.split(",").includes("fail?"));
    return {
      online: onlineReplicas(info),
      alive,
      unsettled: !myFlags.includes("master") || myFlags.some((f) => f.startsWith("fail")) || suspected,
    };
  },
};

/** How to ask each sentinel of a group a question. */
export interface SentinelGroup {
  name: string;
  sentinels: { host: string; port: number }[];
  password?: string;
}

/** How long one sentinel may take to answer the view's questions. */
const SENTINEL_ANSWER_MS = 800;

/**
 * A Sentinel group: every sentinel is asked about the master and its replicas. A
 * sentinel that has the master down (`s_down`, `o_down`), a failover in progress, or
 * names another master, or an answer from no majority of sentinels, leaves the report
 * unsettled; a replica any sentinel has down (`s_down`, `o_down`, `disconnected`) is
 * not alive.
 */
export function sentinelView(group: SentinelGroup): ReplicaView {
  return {
    async report(client) {
      const master = client as Redis;
      const [info, server, answers] = await Promise.all([
        master.info("replication"),
        master.info("server"),
        Promise.all(group.sentinels.map((s) => askSentinel(s, group))),
      ]);
      const online = onlineReplicas(info);
      const heard = answers.filter((a) => a !== undefined);
      // The master this client writes to, by run id: addresses differ with NAT and announce-ip.
      const runId = /^run_id:(\w+)/m.exec(server)?.[1];
      const unsettled =
        !/role:master/.test(info) ||
        heard.length * 2 <= group.sentinels.length ||
        heard.some(
          (a) =>
            a.runId !== runId ||
            a.masterFlags.some((f) => ["s_down", "o_down", "failover_in_progress"].includes(f)),
        );
      const down = new Set(heard.flatMap((a) => a.replicas.filter((r) => r.down).map((r) => r.address)));
      const listed = new Set(heard.flatMap((a) => a.replicas.map((r) => r.address)));
      return { online, alive: [...listed].filter((r) => !down.has(r)), unsettled };
    },
  };
}

interface SentinelAnswer {
  /** The run id of the master it names. */
  runId: string;
  masterFlags: string[];
  replicas: { address: string; down: boolean }[];
}

/** One sentinel's view of the group, or undefined when it did not answer in time. */
async function askSentinel(
  sentinel: { host: string; port: number },
  group: SentinelGroup,
): Promise<SentinelAnswer | undefined> {
  const client = new Redis({
    host: sentinel.host,
    port: sentinel.port,
    ...(group.password ? { password: group.password } : {}),
    lazyConnect: true,
    connectTimeout: SENTINEL_ANSWER_MS,
    commandTimeout: SENTINEL_ANSWER_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    const [master, replicas] = (await Promise.all([
      client.call("SENTINEL", "MASTER", group.name),
      client.call("SENTINEL", "REPLICAS", group.name),
    ])) as [string[], string[][]];
    const m = fields(master);
    return {
      runId: m.runid ?? "",
      masterFlags: (m.flags ?? "").split(","),
      replicas: replicas.map(fields).map((r) => ({
        address: `${r.ip}:${r.port}`,
        down: /(^|,)(s_down|o_down|disconnected)(,|$)/.test(r.flags ?? ""),
      })),
    };
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** A sentinel reply's flat `[key, value, …]` list as an object. */
function fields(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}
