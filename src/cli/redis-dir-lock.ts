import { readdirSync, readFileSync, readlinkSync, realpathSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RedisDirBusyError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { sleep } from "../core/retry.js";

const LOCK_FILE = "roomgate.lock";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * redis-server processes working in `dir` (redis chdirs into its `--dir`), found
 * through /proc; empty where there is no /proc.
 */
export function redisServersIn(dir: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const target = realpathSync(dir);
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "redis-server") continue;
      if (readlinkSync(`/proc/${entry}/cwd`) === target) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or another user's process: not ours either way.
    }
  }
  return found;
}

async function stopOrphan(pid: number, log: Logger): Promise<void> {
  log.warn(
    { pid },
    "stopping a redis-server left running by a roomgate process that ended without stopping it",
  );
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  if (alive(pid)) process.kill(pid, "SIGKILL");
}

/** Ownership of an embedded Redis data folder by this process. */
export interface RedisDirLock {
  release(): void;
}

/**
 * Takes the embedded Redis data folder for this process, so that two roomgate
 * processes never run a redis-server on the same files: a folder owned by a live
 * process is refused with a clear error; a redis-server left behind by a process
 * that died (SIGKILL, a crash) is stopped before a new one starts.
 */
export async function lockRedisDir(dir: string, log: Logger): Promise<RedisDirLock> {
  const file = join(dir, LOCK_FILE);
  const record = JSON.stringify({ owner: process.pid, since: new Date().toISOString() });
  for (let attempt = 0; ; attempt++) {
    try {
      // "wx": of two processes starting at once, exactly one creates the file.
      writeFileSync(file, record, { flag: "wx", mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 2) throw err;
    }
    const owner = ownerOf(file);
    if (owner !== undefined && owner !== process.pid && alive(owner)) {
      throw new RedisDirBusyError(
        `the embedded Redis data folder ${dir} is in use by roomgate process ${owner}: stop that process, ` +
          "give this one its own folder with ROOMGATE_STATE_DIR, or point both at one Redis with REDIS_URL",
      );
    }
    try {
      unlinkSync(file);
    } catch {
      // Another process removed the stale lock first; try again.
    }
  }
  for (const pid of redisServersIn(dir)) await stopOrphan(pid, log);
  return {
    release() {
      if (ownerOf(file) === process.pid) {
        try {
          unlinkSync(file);
        } catch {
          // Already gone.
        }
      }
    },
  };
}

/** The process that holds the embedded Redis folder `dir`, per its lock file (it may have died). */
export function lockOwner(dir: string): number | undefined {
  return ownerOf(join(dir, LOCK_FILE));
}

function ownerOf(file: string): number | undefined {
  try {
    const owner = Number((JSON.parse(readFileSync(file, "utf8")) as { owner?: unknown }).owner);
    return Number.isInteger(owner) ? owner : undefined;
  } catch {
    return undefined;
  }
}
