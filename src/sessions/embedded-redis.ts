import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { RedisMissingError } from "../core/errors.js";
import { privateDir, privatizeTree, withPrivateUmask } from "../core/private-files.js";

/** A private `redis-server` child process, for the embedded default and for tests. */
export interface EmbeddedRedis {
  /** The url to connect with, password included: a secret. */
  url: string;
  port: number;
  /** Process id of the redis-server child, so that an exiting parent can stop it. */
  pid: number;
  stop(): Promise<void>;
}

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

const INSTALL_HINT =
  "redis-server was not found on PATH: install it with `sudo apt-get install -y redis-server` " +
  "(Debian/Ubuntu), or set REDIS_URL to an existing Redis.";

/** Throws a RedisMissingError naming how to install redis-server when it is not on PATH. */
export function assertRedisServerInstalled(): void {
  const probe = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  if (probe.error || probe.status !== 0) throw new RedisMissingError(INSTALL_HINT);
}

let deathSignal: boolean | undefined;

/**
 * The command that runs redis-server so that it ends with its parent: on Linux,
 * util-linux `setpriv --pdeathsig TERM` asks the kernel to send SIGTERM when the
 * process that started it dies, however it dies (a crash, an out-of-memory abort,
 * SIGKILL), when no exit handler can run. Without setpriv, the next start stops an
 * orphan (see lockRedisDir).
 */
function redisCommand(args: string[]): [string, string[]] {
  if (deathSignal === undefined) {
    deathSignal =
      process.platform === "linux" &&
      spawnSync("setpriv", ["--pdeathsig", "TERM", "true"], { stdio: "ignore" }).status === 0;
  }
  return deathSignal ? ["setpriv", ["--pdeathsig", "TERM", "redis-server", ...args]] : ["redis-server", args];
}

/**
 * The embedded server's password, kept in `dir/password` (mode 0600, created on
 * first use), so that other local users cannot reach the bot's Redis on loopback.
 */
export function embeddedRedisPassword(dir: string): string {
  const file = join(dir, "password");
  if (!existsSync(file)) writeFileSync(file, randomBytes(24).toString("hex") + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return readFileSync(file, "utf8").trim();
}

/**
 * Starts `redis-server` on a free loopback port with its data in `dir`, behind a
 * random password kept in the folder; append-only persistence is on unless
 * `persist` is false, so a restart of the demo loses nothing. The password goes
 * in a config file (mode 0600), not on the command line that `ps` shows. The folder
 * and everything Redis writes in it are private to the service user (DESIGN §9), and
 * the server ends with the process that started it.
 */
export async function startEmbeddedRedis(options: {
  dir: string;
  persist?: boolean;
}): Promise<EmbeddedRedis> {
  assertRedisServerInstalled();
  privateDir(options.dir);
  privatizeTree(options.dir);
  const port = await freePort();
  const persist = options.persist ?? true;
  const password = embeddedRedisPassword(options.dir);
  const conf = join(options.dir, "redis.conf");
  writeFileSync(conf, `requirepass ${password}\n`, { mode: 0o600 });
  chmodSync(conf, 0o600);
  const [command, args] = redisCommand([
    conf,
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    options.dir,
    "--appendonly",
    persist ? "yes" : "no",
    "--save",
    "",
    "--daemonize",
    "no",
    "--protected-mode",
    "yes",
    "--loglevel",
    "warning",
  ]);
  const child: ChildProcess = withPrivateUmask(() =>
    spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] }),
  );
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = `redis://:${password}@127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited at start: ${stderr.trim()}`);
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`redis-server did not answer on port ${port}: ${stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    port,
    pid: child.pid ?? 0,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
