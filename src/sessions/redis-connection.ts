import type { Cluster, Redis, RedisOptions } from "ioredis";
import { RedisUnreachableError } from "../core/errors.js";
import { registerSecret, type Logger } from "../core/log.js";
import { ClientWatch, type ClientState, type WatchSettings } from "./client-watch.js";
import { CLUSTER_VIEW, sentinelView, SINGLE_VIEW, type ReplicaView } from "../scheduler/replica-view.js";
import { ReplicaWait } from "../scheduler/replica-wait.js";
import { buildClient } from "./redis-client-builder.js";
import { replicaCounts } from "./redis-masters.js";
import { addressOf, parseNode } from "./redis-node-url.js";
import type { RedisTopology } from "./redis-topology.js";

/** A connection to roomgate's Redis, whichever topology it is: the type every Redis user takes. */
export type RedisClient = Redis | Cluster;

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
    return this.watch.add(
      options.name ?? "client",
      () => buildClient(this.topology, extra),
      options.blocksForMs,
    );
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
