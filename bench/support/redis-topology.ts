import { execFile, type ChildProcess, type SpawnOptions } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { freeClusterPorts, RedisServer } from "../../src/sessions/redis-server.js";

const run = promisify(execFile);

/** How topology nodes are spawned (the bench and fault script track their children). */
type Spawn = (command: string, args: string[], options: SpawnOptions) => ChildProcess;

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis topology: ${what} not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Lines every data node of a topology gets: persistence on, and fast failure detection. */
/**
 * Every data node: AOF fsync once a second, and a full resync starts at once instead of
 * after Redis' default 5 s (`repl-diskless-sync-delay`, kept to let more replicas share
 * one transfer): after a switchover the other replica full-resyncs to the new master,
 * which with `min-replicas-to-write` takes no write until it is done, and a Cluster
 * master promoted after a kill waits for its old master's full resync (docs/reliability.md,
 * "Round 5").
 */
const DATA_NODE = ["appendfsync everysec", "repl-diskless-sync-delay 0"];

/**
 * A Redis Cluster on loopback, free ports: `masters` masters with `replicas` replicas
 * each, created with `redis-cli --cluster create` and waited for until every node
 * says `cluster_state:ok`.
 */
export class RedisClusterTopology {
  private constructor(
    readonly nodes: RedisServer[],
    /** How a node of this cluster is started (for a node added later). */
    private readonly startNode: (port: number, dir: string) => Promise<RedisServer>,
    private readonly dir: string,
  ) {}

  static async start(options: {
    dir: string;
    masters?: number;
    replicas?: number;
    nodeTimeoutMs?: number;
    spawn?: Spawn;
  }): Promise<RedisClusterTopology> {
    const masters = options.masters ?? 3;
    const replicas = options.replicas ?? 1;
    const ports = await freeClusterPorts(masters * (1 + replicas));
    const startNode = (port: number, dir: string) =>
      RedisServer.start({
        port,
        dir,
        config: [
          ...DATA_NODE,
          "cluster-enabled yes",
          "cluster-config-file nodes.conf",
          `cluster-node-timeout ${options.nodeTimeoutMs ?? 2000}`,
          // A replica may take over even after a short disconnect from its master.
          "cluster-replica-validity-factor 0",
          // A range whose master and replicas are all down stops only its own slots, as
          // docs/reliability.md tells operators to configure (Redis' default stops them all).
          "cluster-require-full-coverage no",
        ],
        ...(options.spawn ? { spawn: options.spawn } : {}),
      });
    const nodes = await Promise.all(ports.map((port, i) => startNode(port, join(options.dir, `node-${i}`))));
    const topology = new RedisClusterTopology(nodes, startNode, options.dir);
    await run("redis-cli", [
      "--cluster",
      "create",
      ...nodes.map((n) => n.address),
      "--cluster-replicas",
      String(replicas),
      "--cluster-yes",
    ]);
    await until("cluster_state:ok on every node", 30_000, async () => {
      const states = await Promise.all(nodes.map((n) => topology.info(n, "cluster", "info")));
      return states.every((s) => s.includes("cluster_state:ok"));
    });
    await until("every replica in sync", 30_000, async () => {
      const roles = await Promise.all(nodes.map((n) => topology.info(n, "info", "replication")));
      return roles.filter((r) => r.includes("role:slave")).every((r) => r.includes("master_link_status:up"));
    });
    return topology;
  }

  /** The node URLs roomgate's `redis.cluster.nodes` takes. */
  get urls(): string[] {
    return this.nodes.map((n) => n.url);
  }

  /** The running nodes that are masters now. */
  async masters(): Promise<RedisServer[]> {
    const roles = await Promise.all(
      this.nodes.map(async (n) => (n.running ? await this.info(n, "info", "replication") : "")),
    );
    return this.nodes.filter((_, i) => roles[i]!.includes("role:master"));
  }

  /** The master holding most keys matching `pattern`. */
  async busiestMaster(pattern: string): Promise<{ node: RedisServer; keys: number }> {
    let best: { node: RedisServer; keys: number } | undefined;
    for (const node of await this.masters()) {
      const client = node.client();
      let count = 0;
      let cursor = "0";
      do {
        const [next, found] = await client.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        count += found.length;
      } while (cursor !== "0");
      client.disconnect();
      if (!best || count > best.keys) best = { node, keys: count };
    }
    return best!;
  }

  /** A master's cluster id and the slot ranges it serves (CLUSTER NODES), to follow it through a failover. */
  async identify(node: RedisServer): Promise<{ id: string; slots: string[] }> {
    const id = (await this.info(node, "cluster", "myid")).trim();
    const line = (await this.info(node, "cluster", "nodes")).split("\n").find((l) => l.startsWith(`${id} `));
    return { id, slots: line?.trim().split(" ").slice(8) ?? [] };
  }

  /**
   * Waits until the killed master was really replaced: every running node marks it
   * `fail`, another master serves its slots, and every running node says
   * `cluster_state:ok`; returns the new master. (Right after a kill -9 the others still
   * say ok: they notice only after `cluster-node-timeout`, so "ok" alone would let the old
   * master come back before any failover — a restart, not a failover.)
   */
  async failedOver(old: { id: string; slots: string[] }, ms = 30_000): Promise<RedisServer> {
    let promoted: RedisServer | undefined;
    await until(`a replica promoted in place of ${old.id}`, ms, async () => {
      const running = this.nodes.filter((n) => n.running);
      const states = await Promise.all(running.map((n) => this.info(n, "cluster", "info")));
      if (!states.every((s) => s.includes("cluster_state:ok"))) return false;
      const views = await Promise.all(running.map((n) => this.info(n, "cluster", "nodes")));
      const lines = views.map((v) =>
        v
          .trim()
          .split("\n")
          .map((l) => l.trim().split(" ")),
      );
      if (!lines.every((view) => view.some((f) => f[0] === old.id && /(^|,)fail(,|$)/.test(f[2]!))))
        return false;
      const owner = lines[0]!.find(
        (f) =>
          f[0] !== old.id &&
          /master/.test(f[2]!) &&
          !/fail/.test(f[2]!) &&
          f.slice(8).includes(old.slots[0]!),
      );
      if (!owner) return false;
      const ids = await Promise.all(running.map((n) => this.info(n, "cluster", "myid")));
      promoted = running[ids.findIndex((id) => id.trim() === owner[0])];
      return promoted !== undefined;
    });
    return promoted!;
  }

  /** The node replicating the master whose cluster id is `id` (CLUSTER NODES). */
  async replicaOf(id: string): Promise<RedisServer> {
    for (const node of this.nodes.filter((n) => n.running)) {
      const info = await this.info(node, "info", "replication");
      if (!info.includes("role:slave")) continue;
      const nodes = await this.info(node, "cluster", "nodes");
      const mine = nodes.split("\n").find((l) => l.includes("myself"));
      if (mine?.trim().split(" ")[3] === id) return node;
    }
    throw new Error(`no running replica of ${id}`);
  }

  /** Sends `args` to `node` as they are (CLUSTER FAILOVER, CONFIG SET …). */
  async command(node: RedisServer, args: string[]): Promise<unknown> {
    const client = node.client();
    try {
      return await client.call(args[0]!, ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  /**
   * Starts one more node and adds it as an empty master (`redis-cli --cluster add-node`),
   * waiting until every node agrees on the configuration (what `rebalance` requires).
   */
  async addMaster(): Promise<RedisServer> {
    const [port] = await freeClusterPorts(1);
    const node = await this.startNode(port!, join(this.dir, `node-${this.nodes.length}`));
    const existing = this.nodes.find((n) => n.running)!;
    this.nodes.push(node);
    await run("redis-cli", ["--cluster", "add-node", node.address, existing.address]);
    const id = (await this.info(node, "cluster", "myid")).trim();
    // `--cluster check` exits 0 even when nodes disagree; every node's own view is read.
    await until(`every node knowing ${node.address} as a master`, 30_000, async () => {
      const running = this.nodes.filter((n) => n.running);
      const views = await Promise.all(running.map((n) => this.info(n, "cluster", "nodes")));
      return views.every((view) => {
        const lines = view.trim().split("\n");
        const mine = lines.find((l) => l.startsWith(`${id} `))?.split(" ")[2] ?? "";
        return lines.length === running.length && /master/.test(mine) && !/handshake|noaddr/.test(mine);
      });
    });
    // A master that has just started keeps its cluster state "fail" for about 2 s (Redis'
    // CLUSTER_WRITABLE_DELAY) and refuses a slot migrated to it with CLUSTERDOWN: a
    // rebalance started before then left a slot half migrated (seen in a fault run).
    await this.allOk();
    return node;
  }

  /**
   * Moves slots until every master, empty ones included, serves an equal share
   * (`redis-cli --cluster rebalance --cluster-use-empty-masters`): keys migrate slot by
   * slot, so clients meet ASK and TRYAGAIN while it runs. Returns how many slots moved.
   */
  async rebalance(): Promise<number> {
    const existing = this.nodes.find((n) => n.running)!;
    const { stdout } = await run(
      "redis-cli",
      ["--cluster", "rebalance", existing.address, "--cluster-use-empty-masters"],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: Error & { stdout?: string }) => {
      throw new Error(`redis-cli --cluster rebalance failed: ${err.stdout?.slice(-500) ?? err.message}`);
    });
    return [...stdout.matchAll(/Moving (\d+) slots/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  }

  /** Waits until every running node says `cluster_state:ok`. */
  async allOk(ms = 60_000): Promise<void> {
    await until("cluster_state:ok on every running node", ms, async () => {
      const running = this.nodes.filter((n) => n.running);
      const states = await Promise.all(running.map((n) => this.info(n, "cluster", "info")));
      return states.every((s) => s.includes("cluster_state:ok"));
    });
  }

  /** Waits until `node` (an old master started again) is a replica in sync with its master. */
  async inSyncAsReplica(node: RedisServer, ms = 30_000): Promise<void> {
    await until(`${node.address} a replica in sync`, ms, async () => {
      const info = await this.info(node, "info", "replication");
      return info.includes("role:slave") && info.includes("master_link_status:up");
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
  }

  private async info(node: RedisServer, command: "cluster" | "info", arg: string): Promise<string> {
    const client = node.client();
    try {
      return String(await client.call(command, arg));
    } finally {
      client.disconnect();
    }
  }
}

/**
 * A Sentinel group on loopback, free ports: one master, `replicas` replicas and
 * `sentinels` sentinels watching it as `name`, with a quorum of a majority and a
 * 1 s down-after, so a dead master is replaced within a few seconds.
 */
export class RedisSentinelTopology {
  private constructor(
    readonly name: string,
    readonly data: RedisServer[],
    readonly sentinels: RedisServer[],
  ) {}

  static async start(options: {
    dir: string;
    name?: string;
    replicas?: number;
    sentinels?: number;
    /** Extra lines for the data nodes (e.g. `min-replicas-to-write 1`). */
    config?: string[];
    /** The sentinels' down-after-milliseconds (default 1000; Redis' own default is 30000). */
    downAfterMs?: number;
    spawn?: Spawn;
  }): Promise<RedisSentinelTopology> {
    const name = options.name ?? "rgmaster";
    const spawn = options.spawn ? { spawn: options.spawn } : {};
    const master = await RedisServer.start({
      dir: join(options.dir, "data-0"),
      config: [...DATA_NODE, ...(options.config ?? [])],
      ...spawn,
    });
    const replicas = await Promise.all(
      Array.from({ length: options.replicas ?? 2 }, (_, i) =>
        RedisServer.start({
          dir: join(options.dir, `data-${i + 1}`),
          config: [...DATA_NODE, ...(options.config ?? []), `replicaof 127.0.0.1 ${master.port}`],
          ...spawn,
        }),
      ),
    );
    const count = options.sentinels ?? 3;
    const sentinels = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        RedisServer.start({
          dir: join(options.dir, `sentinel-${i}`),
          sentinel: true,
          config: [
            "sentinel resolve-hostnames no",
            `sentinel announce-ip 127.0.0.1`,
            `sentinel monitor ${name} 127.0.0.1 ${master.port} ${Math.floor(count / 2) + 1}`,
            `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
            `sentinel failover-timeout ${name} 10000`,
            `sentinel parallel-syncs ${name} 1`,
          ],
          ...spawn,
        }),
      ),
    );
    const topology = new RedisSentinelTopology(name, [master, ...replicas], sentinels);
    await until("the master counting its replicas as good (min-replicas-to-write)", 30_000, async () => {
      const c = master.client();
      try {
        const info = String(await c.info("replication"));
        const good = /min_slaves_good_slaves:(\d+)/.exec(info);
        return good === null || Number(good[1]) >= replicas.length;
      } finally {
        c.disconnect();
      }
    });
    await until("replicas in sync and known to every sentinel", 30_000, async () => {
      const known = await Promise.all(
        sentinels.map((s) => topology.ask(s, ["replicas", name]).then((r) => (r as unknown[]).length)),
      );
      return known.every((n) => n === replicas.length);
    });
    // Known is not synced: until a replica's first sync is done, every write that waits for
    // it fails, and roomgate would tell its people that it cannot take messages.
    for (const replica of replicas) await topology.inSync(replica, 30_000);
    return topology;
  }

  /** The sentinel URLs roomgate's `redis.sentinel.nodes` takes. */
  get urls(): string[] {
    return this.sentinels.map((s) => s.url);
  }

  /** The data node the sentinels name as master now. */
  async master(): Promise<RedisServer> {
    for (const s of this.sentinels.filter((n) => n.running)) {
      try {
        const [, port] = (await this.ask(s, ["get-master-addr-by-name", this.name])) as [string, string];
        const node = this.data.find((d) => d.port === Number(port));
        if (node) return node;
      } catch {
        // Ask the next sentinel.
      }
    }
    throw new Error("no sentinel names a master");
  }

  /**
   * Asks the sentinels for a failover (`SENTINEL FAILOVER`), as an operator's switchover
   * does. A sentinel answers NOGOODSLAVE while no replica is one it would promote yet (its
   * link to them not up, or their last INFO too old, soon after a start or an earlier
   * failover): an operator asks again, and so does this, until it is taken or `ms` pass.
   */
  async failover(ms = 30_000): Promise<void> {
    let refused: unknown;
    await until("a sentinel taking the failover", ms, async () => {
      try {
        await this.ask(this.sentinels[0]!, ["failover", this.name]);
        return true;
      } catch (err) {
        if (!String(err).includes("NOGOODSLAVE")) refused = err;
        return refused === undefined ? false : true;
      }
    });
    if (refused !== undefined) throw refused;
  }

  /** Sends `args` to a data node as they are (CONFIG SET, CLIENT PAUSE, BGSAVE …). */
  async command(node: RedisServer, args: string[]): Promise<unknown> {
    const client = node.client();
    try {
      return await client.call(args[0]!, ...args.slice(1));
    } finally {
      client.disconnect();
    }
  }

  /**
   * Calls `moved` with each master the sentinels switch to after `from` (`+switch-master`,
   * as the first running sentinel to announce it says), until the returned stop is called.
   */
  watchSwitches(from: RedisServer, moved: (to: RedisServer) => void): () => void {
    let current = from.port;
    const subscribers = this.sentinels
      .filter((s) => s.running)
      .map((sentinel) => {
        const client = new Redis({
          host: "127.0.0.1",
          port: sentinel.port,
          maxRetriesPerRequest: 1,
          retryStrategy: () => null,
        });
        client.on("error", () => undefined);
        client.on("message", (_channel: string, message: string) => {
          // "<name> <old ip> <old port> <new ip> <new port>"
          const port = Number(message.split(" ")[4]);
          const node = this.data.find((d) => d.port === port);
          if (port === current || !node) return;
          current = port;
          moved(node);
        });
        void client.subscribe("+switch-master").catch(() => undefined);
        return client;
      });
    return () => subscribers.forEach((c) => c.disconnect());
  }

  /** What every running sentinel says of the replicas (SENTINEL REPLICAS: field → value per replica). */
  async replicasSeen(): Promise<Record<string, string>[][]> {
    return Promise.all(
      this.sentinels
        .filter((s) => s.running)
        .map(async (s) => {
          const replicas = (await this.ask(s, ["replicas", this.name])) as string[][];
          return replicas.map((flat) =>
            Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]!]] : []))),
          );
        }),
    );
  }

  /** Waits until `node` is a replica of the current master with its link up. */
  async inSync(node: RedisServer, ms = 60_000): Promise<void> {
    await until(`${node.address} a replica in sync`, ms, async () => {
      const info = String(await this.command(node, ["INFO", "replication"]));
      return info.includes("role:slave") && info.includes("master_link_status:up");
    });
  }

  /** Waits until the sentinels name a master other than `old`, and it is a master (down-after may be 30 s). */
  async promotedFrom(old: RedisServer, ms = 90_000): Promise<RedisServer> {
    let found: RedisServer | undefined;
    await until("a new master", ms, async () => {
      const now = await this.master();
      if (now === old) return false;
      const client = now.client();
      try {
        const role = String(await client.info("replication"));
        found = now;
        return role.includes("role:master");
      } finally {
        client.disconnect();
      }
    });
    return found!;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, ...this.data].map((n) => n.kill()));
  }

  private async ask(sentinel: RedisServer, args: string[]): Promise<unknown> {
    const client = new Redis({
      host: "127.0.0.1",
      port: sentinel.port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    client.on("error", () => undefined);
    try {
      return await client.call("SENTINEL", ...args);
    } finally {
      client.disconnect();
    }
  }
}
