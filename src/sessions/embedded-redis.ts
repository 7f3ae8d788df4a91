import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RedisMissingError } from "../core/errors.js";
import { privateDir, privatizeTree } from "../core/private-files.js";
import { RedisServer } from "./redis-server.js";

export { freePort } from "./redis-server.js";

/** A private `redis-server` child process, for the embedded default and for tests. */
export interface EmbeddedRedis {
  /** The url to connect with, password included: a secret. */
  url: string;
  port: number;
  /** Process id of the redis-server child, so that an exiting parent can stop it. */
  pid: number;
  stop(): Promise<void>;
}

const INSTALL_HINT =
  "redis-server was not found on PATH: install it with `sudo apt-get install -y redis-server` " +
  "(Debian/Ubuntu), or set REDIS_URL to an existing Redis.";

/** Throws a RedisMissingError naming how to install redis-server when it is not on PATH. */
export function assertRedisServerInstalled(): void {
  const probe = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  if (probe.error || probe.status !== 0) throw new RedisMissingError(INSTALL_HINT);
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

/** The embedded server's memory cap when the configuration names none (`redis.embeddedMaxMemoryMb`). */
export const EMBEDDED_MAX_MEMORY_MB = 512;

/**
 * Starts `redis-server` on a free loopback port with its data in `dir`, behind a
 * random password kept in the folder; append-only persistence is on unless
 * `persist` is false, so a restart of the demo loses nothing. Its memory is capped at
 * `maxMemoryMb` with `noeviction`: at the cap writes are refused (`OOM command not
 * allowed`: logged, retried until Redis takes writes again) rather than queued turns,
 * leases or sessions evicted without a word. The password goes
 * in a config file (mode 0600), not on the command line that `ps` shows. The folder
 * and everything Redis writes in it are private to the service user (DESIGN §9), and
 * the server ends with the process that started it.
 */
export async function startEmbeddedRedis(options: {
  dir: string;
  persist?: boolean;
  maxMemoryMb?: number;
}): Promise<EmbeddedRedis> {
  assertRedisServerInstalled();
  privateDir(options.dir);
  privatizeTree(options.dir);
  const server = await RedisServer.start({
    dir: options.dir,
    password: embeddedRedisPassword(options.dir),
    appendonly: options.persist ?? true,
    config: [`maxmemory ${options.maxMemoryMb ?? EMBEDDED_MAX_MEMORY_MB}mb`, "maxmemory-policy noeviction"],
    private: true,
  });
  return { url: server.url, port: server.port, pid: server.pid ?? 0, stop: () => server.stop() };
}
