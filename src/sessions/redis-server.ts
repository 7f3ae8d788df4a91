import { spawn as spawnChild, spawnSync, type ChildProcess, type SpawnOptions } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Redis } from "ioredis";
import { withPrivateUmask } from "../core/private-files.js";

/** Finds a free loopback TCP port by binding port 0. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

/** The highest port a Cluster node may have: its bus port is 10000 above it. */
const MAX_CLUSTER_PORT = 65535 - 10000;

/**
 * Free loopback ports for `count` Cluster nodes: each at most 55535 (redis-server
 * refuses a higher one, its bus port would not exist) with its bus port free too,
 * and no port or bus port twice (ports of the ephemeral range are often above it).
 */
export async function freeClusterPorts(count: number): Promise<number[]> {
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries++) {
    if (tries > 100 * count) throw new Error("no free port pairs for the Cluster's nodes");
    const port = await freePort();
    const bus = port + 10000;
    if (port > MAX_CLUSTER_PORT || taken.has(port) || taken.has(bus) || !(await isFree(bus))) continue;
    taken.add(port).add(bus);
    ports.push(port);
  }
  return ports;
}

async function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** How a `redis-server` child is run. */
export interface RedisServerOptions {
  /** Its data folder (and config file). */
  dir: string;
  /** Default: a free loopback port. */
  port?: number;
  /** `requirepass` (and `masterauth`), written to the config file (mode 0600), never on the command line. */
  password?: string;
  /** Append-only persistence; default true. */
  appendonly?: boolean;
  /** Further config lines (`cluster-enabled yes`, `replicaof 127.0.0.1 7001`, `sentinel monitor …`). */
  config?: string[];
  /** Run as a Sentinel (`--sentinel`). */
  sentinel?: boolean;
  /** How to spawn the child (the benchmark tracks its children to kill them on exit). */
  spawn?: (command: string, args: string[], options: SpawnOptions) => ChildProcess;
  /**
   * The embedded default's server: what it writes is private to the service user (it
   * runs with umask 077) and it ends with the process that started it.
   */
  private?: boolean;
}

let deathSignal: boolean | undefined;

/**
 * The command that runs redis-server so that it ends with its parent: on Linux,
 * util-linux `setpriv --pdeathsig TERM` asks the kernel to send SIGTERM when the
 * process that started it dies, however it dies (a crash, an out-of-memory abort,
 * SIGKILL), when no exit handler can run. Without setpriv, the next start stops an
 * orphan (see lockRedisDir).
 */
function endsWithParent(args: string[]): [string, string[]] {
  if (deathSignal === undefined) {
    deathSignal =
      process.platform === "linux" &&
      spawnSync("setpriv", ["--pdeathsig", "TERM", "true"], { stdio: "ignore" }).status === 0;
  }
  return deathSignal ? ["setpriv", ["--pdeathsig", "TERM", "redis-server", ...args]] : ["redis-server", args];
}

/**
 * One `redis-server` child on loopback: the embedded default's server, and every
 * node of the test, fault-script and benchmark topologies (a single instance, a
 * Cluster's masters and replicas, a Sentinel group's data nodes and sentinels).
 * It keeps its port, so it can be killed and started again on the same address.
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  private stderr = "";
  private written = false;

  private constructor(
    readonly port: number,
    private readonly options: RedisServerOptions,
  ) {}

  /** Starts the server and waits until it answers (an append-only file loaded). */
  static async start(options: RedisServerOptions): Promise<RedisServer> {
    mkdirSync(options.dir, { recursive: true });
    const server = new RedisServer(options.port ?? (await freePort()), options);
    await server.run();
    return server;
  }

  /** Its URL, password included: a secret. */
  get url(): string {
    const auth = this.options.password ? `:${encodeURIComponent(this.options.password)}@` : "";
    return `redis://${auth}127.0.0.1:${this.port}`;
  }

  /** Its address without secrets. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** A plain client of this very node (not following a cluster or a sentinel). */
  client(): Redis {
    const client = new Redis({
      host: "127.0.0.1",
      port: this.port,
      ...(this.options.password ? { password: this.options.password } : {}),
      maxRetriesPerRequest: 1,
      lazyConnect: true,
    });
    client.on("error", () => undefined);
    return client;
  }

  /** Stops it as an operator would (SIGTERM: the append-only file is flushed). */
  async stop(): Promise<void> {
    await this.signal("SIGTERM");
  }

  /** Kills it at once (SIGKILL), as a crash would. */
  async kill(): Promise<void> {
    await this.signal("SIGKILL");
  }

  /** Stops it, waits `downMs`, and starts it again on the same port with its data. */
  async restart(downMs: number): Promise<void> {
    await this.stop();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.run();
  }

  /** Starts it again after a stop or kill. */
  async start(): Promise<void> {
    if (!this.running) await this.run();
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      try {
        // A tracked child leads its own process group.
        process.kill(this.options.spawn ? -child.pid! : child.pid!, signal);
      } catch {
        resolve();
      }
    });
  }

  private async run(): Promise<void> {
    const { dir, password, appendonly = true, config = [], sentinel = false } = this.options;
    const conf = join(dir, sentinel ? "sentinel.conf" : "redis.conf");
    const lines = [
      `port ${this.port}`,
      "bind 127.0.0.1",
      `dir ${dir}`,
      "daemonize no",
      "protected-mode yes",
      "loglevel warning",
      ...(sentinel ? [] : ['save ""', `appendonly ${appendonly ? "yes" : "no"}`]),
      ...(password && !sentinel ? [`requirepass ${password}`, `masterauth ${password}`] : []),
      ...config,
    ];
    // A sentinel rewrites its file as it learns the group: written once, kept across restarts.
    if (!sentinel || !this.written) writeFileSync(conf, `${lines.join("\n")}\n`, { mode: 0o600 });
    this.written = true;
    chmodSync(conf, 0o600);
    const spawn = this.options.spawn ?? spawnChild;
    const args = sentinel ? [conf, "--sentinel"] : [conf];
    const child = this.options.private
      ? withPrivateUmask(() => {
          const [command, argv] = endsWithParent(args);
          return spawn(command, argv, { stdio: ["ignore", "ignore", "pipe"] });
        })
      : spawn("redis-server", args, { stdio: ["ignore", "ignore", "pipe"] });
    this.child = child;
    this.stderr = "";
    child.stderr?.on("data", (d: Buffer) => (this.stderr += d.toString()));
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`redis-server exited at start: ${this.stderr.trim()}`);
      const probe = new Redis({
        host: "127.0.0.1",
        port: this.port,
        ...(password && !sentinel ? { password } : {}),
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on("error", () => undefined);
      try {
        await probe.connect();
        // Loading the append-only file answers LOADING until done.
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) {
          child.kill("SIGKILL");
          throw new Error(`redis-server did not answer on port ${this.port}: ${this.stderr.trim()}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}
