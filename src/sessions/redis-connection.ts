import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { Config } from "../core/config.js";
import { RedisUnreachableError } from "../core/errors.js";
import { registerSecret, type Logger } from "../core/log.js";
import { ClientWatch, type ClientState, type WatchSettings } from "./client-watch.js";
import { CLUSTER_VIEW, sentinelView, SINGLE_VIEW, type ReplicaView } from "../scheduler/replica-view.js";
import { ReplicaWait } from "../scheduler/replica-wait.js";

/** A connection to roomgate's Redis, whichever topology it is: the type every Redis user takes. */
export type RedisClient = Redis | Cluster;

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

/** A node address of a URL, and what the URL says about logging in. */
interface NodeUrl {
  host: string;
  port: number;
  username?: string;
  password?: string;
  tls: boolean;
}

function parseNode(text: string): NodeUrl {
  const url = new URL(text);
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(url.port || 6379),
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    tls: url.protocol === "rediss:",
  };
}

/** A node as `host:port`, for messages (never the password). */
export function addressOf(text: string): string {
  try {
    const node = parseNode(text);
    return `${node.host}:${node.port}`;
  } catch {
    return "(unreadable address)";
  }
}

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

/** What a client is for: a blocking client holds its own connection (BLPOP must not stall others). */
export interface ClientOptions {
  /** Fail commands at once instead of queueing them while disconnected (CLI tools, probes). */
  failFast?: boolean;
  /** Don't connect until the first command. */
  lazy?: boolean;
  /** What the client is for, as logs, metrics and health name it. */
  name?: string;
  /** A blocking command may hold the client this long, its health PING waiting behind it. */
  blocksForMs?: number;
  /**
   * Commands issued in one turn of the event loop leave in one write (ioredis
   * `enableAutoPipelining`), on one instance or a Sentinel master. Not on a Cluster:
   * a pipeline whose writes are partly redirected (MOVED) is not followed by ioredis,
   * where a lone command is.
   */
  autoPipelining?: boolean;
}

/**
 * How long a sentinel may take to answer the client's question for the master: without
 * a limit, a hung sentinel holds a reconnecting client forever.
 */
const SENTINEL_COMMAND_MS = 3000;

/**
 * How long a Sentinel client's old master connection may take to close after a
 * `+switch-master` before it is destroyed: ioredis ends it gracefully, and a hung
 * master (no RST) never completes that; ioredis' default 2 s was 2 s more of no
 * answers after every failover. A live old master answers what is in flight well
 * within this.
 */
const SWITCH_CLOSE_MS = 500;

/**
 * Builds every Redis client roomgate uses, for one topology: `start`, `worker`,
 * `shell`, `dead-letters`, the persistence check, the metrics probe and the embedded
 * default all get their clients here, so that a Cluster is always an ioredis
 * Cluster (routing by slot, following MOVED) and a Sentinel group always a
 * Sentinel-aware client (following the master, reconnecting on READONLY).
 */
export class RedisConnection {
  private shared: RedisClient | undefined;
  private readonly watch = new ClientWatch();

  private waitSetting: number | "auto" = 0;
  private wait: ReplicaWait | undefined;

  constructor(
    readonly topology: RedisTopology,
    /**
     * The least number of replicas acknowledged writes wait for: the configured number, or
     * for "auto" 1 when the topology has replicas (resolved by `resolveWait`), else 0.
     */
    public waitReplicas = 0,
    readonly waitTimeoutMs = 1000,
  ) {
    for (const url of this.urls()) registerSecret(parseNode(url).password);
    if (topology.kind === "sentinel") registerSecret(topology.password);
  }

  /** A connection to one instance at `url` (tests, tools, the embedded default). */
  static single(url: string): RedisConnection {
    return new RedisConnection({ kind: "single", url });
  }

  /** The topology in words for logs and messages, without secrets. */
  describe(): string {
    const t = this.topology;
    if (t.kind === "single") return `redis ${addressOf(t.url)}`;
    if (t.kind === "cluster") return `redis cluster ${t.nodes.map(addressOf).join(", ")}`;
    return `redis sentinel master "${t.name}" via ${t.nodes.map(addressOf).join(", ")}`;
  }

  /** The one client a process shares for ordinary commands (created on first use). */
  get client(): RedisClient {
    // The scheduler's turns share it: a turn's step and send slot, and the calls of
    // rooms whose replies arrived together, leave in one write (a write per call was the
    // largest single cost of a busy worker, docs/benchmarks.md).
    this.shared ??= this.create({ name: "shared", autoPipelining: true });
    return this.shared;
  }

  /**
   * Watches every client of this connection from now on (ClientWatch): one that ends or
   * stops answering is replaced under its users, and `settings.lost` is called when no
   * replacement answers either.
   */
  watchClients(settings: WatchSettings): void {
    this.watch.start(settings);
  }

  /** The open clients of this connection and how long each has been silent, for health. */
  clientStates(): ClientState[] {
    return this.watch.states();
  }

  /**
   * The shared client once connected (a cluster's nodes known), for commands on every
   * node; with `timeoutMs`, a RedisUnreachableError when it does not answer in time.
   */
  async ready(timeoutMs?: number): Promise<RedisClient> {
    if (timeoutMs === undefined) {
      await this.client.ping();
      return this.client;
    }
    let timer: NodeJS.Timeout | undefined;
    let last = "";
    const seen = (err: Error) => (last = err.message);
    this.client.on("error", seen);
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const why = last ? ` (${last})` : "";
        reject(
          new RedisUnreachableError(
            `${this.describe()} did not answer within ${timeoutMs / 1000} s${why}; is it running, and are the address and password right?`,
          ),
        );
      }, timeoutMs);
    });
    try {
      await Promise.race([this.client.ping(), late]);
    } finally {
      clearTimeout(timer);
      this.client.off("error", seen);
    }
    return this.client;
  }

  /**
   * A new client of its own (a blocking BLPOP, a subscriber, a tool), watched (see
   * `watchClients`) and closed by `close`: its users hold a handle whose ioredis client
   * underneath is replaced when it ends or stops answering.
   */
  create(options: ClientOptions = {}): RedisClient {
    const extra: RedisOptions = {
      ...(options.failFast ? { maxRetriesPerRequest: 1 } : {}),
      ...(options.lazy ? { lazyConnect: true } : {}),
      ...(options.autoPipelining && this.topology.kind !== "cluster" ? { enableAutoPipelining: true } : {}),
    };
    return this.watch.add(options.name ?? "client", () => this.build(extra), options.blocksForMs);
  }

  private build(extra: RedisOptions): RedisClient {
    const t = this.topology;
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
    return new Redis({
      ...COMMON,
      ...extra,
      sentinels: sentinels.map((n) => ({ host: n.host, port: n.port })),
      name: t.name,
      ...(login.username ? { username: login.username } : {}),
      ...(login.password ? { password: login.password } : {}),
      ...(t.password ? { sentinelPassword: t.password } : {}),
      ...(tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
      failoverDetector: true,
      disconnectTimeout: SWITCH_CLOSE_MS,
      sentinelCommandTimeout: SENTINEL_COMMAND_MS,
      sentinelRetryStrategy: (times) => Math.min(100 * times, 2000),
    });
  }

  /** Every URL the topology names. */
  private urls(): string[] {
    const t = this.topology;
    return t.kind === "single" ? [t.url] : t.nodes;
  }

  /**
   * Resolves `waitReplicas: "auto"`: one replica when the topology has replicas (every
   * master of a cluster has one, the Sentinel master or the single instance has one).
   */
  async resolveWait(setting: number | "auto", log: Logger): Promise<number> {
    this.waitSetting = setting;
    this.wait = undefined;
    if (setting !== "auto") {
      this.waitReplicas = setting;
      return setting;
    }
    const counts = await replicaCounts(await this.ready()).catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, "could not count replicas; writes wait for none");
      return [0];
    });
    this.waitReplicas = counts.length > 0 && counts.every((n) => n >= 1) ? 1 : 0;
    return this.waitReplicas;
  }

  /** How the shared client's acknowledged writes wait for replicas (see ReplicaWait). */
  durability(log: Logger): ReplicaWait {
    this.wait ??= new ReplicaWait(
      this.client,
      this.waitSetting === "auto" ? "auto" : this.waitReplicas,
      this.waitReplicas,
      this.waitTimeoutMs,
      log,
      this.replicaView(),
    );
    return this.wait;
  }

  /** How this topology is asked about a master's replicas (see ReplicaWait). */
  private replicaView(): ReplicaView {
    const t = this.topology;
    if (t.kind === "single") return SINGLE_VIEW;
    if (t.kind === "cluster") return CLUSTER_VIEW;
    return sentinelView({
      name: t.name,
      sentinels: t.nodes.map(parseNode).map((n) => ({ host: n.host, port: n.port })),
      ...(t.password ? { password: t.password } : {}),
    });
  }

  /** Closes every client this connection made. */
  close(): void {
    this.watch.close();
    this.shared = undefined;
  }
}

function nodeLogin(node: NodeUrl): RedisOptions {
  return {
    host: node.host,
    port: node.port,
    ...(node.username ? { username: node.username } : {}),
    ...(node.password ? { password: node.password } : {}),
    ...(node.tls ? { tls: {} } : {}),
  };
}

/** The masters' connected-replica counts, from INFO replication (one per master of a cluster). */
async function replicaCounts(client: RedisClient): Promise<number[]> {
  const masters = client instanceof Cluster ? client.nodes("master") : [client];
  return Promise.all(
    masters.map(async (node) => {
      const info = await node.info("replication");
      return Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? 0);
    }),
  );
}

/** Each master of the client (one for a single instance or Sentinel), to run a command on every one. */
export function mastersOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes("master") : [client];
}

/** Every key matching `pattern` on every master (SCAN, never KEYS). */
export async function scanAll(client: RedisClient, pattern: string, limit = Infinity): Promise<string[]> {
  const found: string[] = [];
  for (const node of mastersOf(client)) {
    let cursor = "0";
    do {
      const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== "0" && found.length < limit);
  }
  return found;
}
