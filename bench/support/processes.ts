import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

const started = new Set<ChildProcess>();

/**
 * Spawns a child in its own process group, so that it and everything it started
 * (a namespace child, say) can be killed together; every child is remembered and
 * killed by `killAll`, which runs on exit, on SIGINT/SIGTERM and on a crash.
 */
export function spawnTracked(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options, detached: true });
  started.add(child);
  child.once("exit", () => started.delete(child));
  return child;
}

/** SIGKILLs one tracked child's whole process group. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Kills every child this process started (and their groups). */
export function killAll(): void {
  for (const child of started) killGroup(child);
}

let installed = false;

/** Installs the cleanup on every way out of the process, once. */
export function cleanupOnExit(): void {
  if (installed) return;
  installed = true;
  process.on("exit", killAll);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  process.on("uncaughtException", (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  });
}

/** Resolves when the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

const TICKS = 100; // USER_HZ on Linux
const PAGE = 4096;

interface ProcStat {
  pid: number;
  ppid: number;
  cpuMs: number;
  rssBytes: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses; fields after it are fixed.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return {
      pid,
      ppid: Number(fields[1]),
      cpuMs: ((utime + stime) * 1000) / TICKS,
      rssBytes: Number(fields[21]) * PAGE,
    };
  } catch {
    return undefined;
  }
}

/** The processes `roots` and all their descendants, read from /proc now. */
export function processTree(roots: number[]): ProcStat[] {
  const all: ProcStat[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) all.push(stat);
  }
  const wanted = new Set(roots);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of all) {
      if (!wanted.has(p.pid) && wanted.has(p.ppid)) {
        wanted.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => wanted.has(p.pid));
}

/** CPU time (user + system) used so far by each process of the trees of `roots`, by pid. */
export function cpuByPid(roots: number[]): Map<number, number> {
  return new Map(processTree(roots).map((p) => [p.pid, p.cpuMs]));
}

/** CPU milliseconds spent between two snapshots (processes that ended in between are not counted). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Resident memory of the trees of `roots`, in bytes. */
export function rssOf(roots: number[]): number {
  return processTree(roots).reduce((sum, p) => sum + p.rssBytes, 0);
}
