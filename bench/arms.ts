import type { ChildProcess } from "node:child_process";
import { createWriteStream, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { exited, killGroup, spawnTracked } from "./support/processes.js";
import { ROOT, RoomgateFleet } from "./support/roomgate-fleet.js";

/** What runs one side of the comparison, started fresh for every workload. */
export interface Arm {
  readonly name: string;
  /** Processes whose trees' CPU and memory count for this arm (Redis is added for roomgate). */
  pids(): number[];
  readonly usesRedis: boolean;
  stop(): Promise<void>;
}

/** How an arm is pointed at the stand-in and Redis. */
export interface ArmTarget {
  apiRoot: string;
  token: string;
  chats: number[];
  redisUrl: string;
  /** A cluster's node URLs: when given, roomgate is pointed at the cluster instead of `redisUrl`. */
  clusterNodes?: string[];
  dir: string;
}

/** The floor: a bare grammY bot calling the echo tool inline, with `bot.start()` or `run(bot)`. */
export async function startFloor(mode: "polling" | "runner", target: ArmTarget): Promise<Arm> {
  const child = spawnTracked(
    process.execPath,
    [
      ...cpuProfile(),
      "--import",
      "tsx",
      join(ROOT, "bench/floor-bot.ts"),
      target.apiRoot,
      target.token,
      mode,
    ],
    { cwd: ROOT },
  );
  await ready(child, /floor ready/);
  return {
    name: mode === "polling" ? "floor bot.start()" : "floor run(bot)",
    usesRedis: false,
    pids: () => [child.pid!],
    stop: async () => {
      child.kill("SIGTERM");
      const timer = setTimeout(() => killGroup(child), 5_000);
      await exited(child);
      clearTimeout(timer);
      killGroup(child);
    },
  };
}

/** bullmq's worker concurrency: roomgate's default (`worker.concurrency`), so both run as many turns at once. */
const BULLMQ_CONCURRENCY = 8;

/**
 * The bullmq peer: a grammY bot (`run(bot)`) that queues each update on a bullmq queue,
 * and a bullmq worker in a second process that calls the echo tool and replies. The
 * queue is on the same Redis (AOF on) as roomgate's arms.
 */
export async function startBullmq(target: ArmTarget): Promise<Arm> {
  const queue = `bench-${target.token.split(":")[0]}`;
  const args = (file: string, ...rest: string[]) => [
    ...cpuProfile(),
    "--import",
    "tsx",
    join(ROOT, file),
    target.apiRoot,
    target.token,
    target.redisUrl,
    queue,
    ...rest,
  ];
  const worker = spawnTracked(process.execPath, args("bench/bullmq-worker.ts", String(BULLMQ_CONCURRENCY)), {
    cwd: ROOT,
  });
  logTo(worker, join(target.dir, `${queue}-worker.log`));
  await ready(worker, /bullmq worker ready/);
  const bot = spawnTracked(process.execPath, args("bench/bullmq-bot.ts"), { cwd: ROOT });
  logTo(bot, join(target.dir, `${queue}-bot.log`));
  await ready(bot, /bullmq bot ready/);
  const children = [bot, worker];
  return {
    name: BULLMQ_ARM,
    usesRedis: true,
    pids: () => children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => c.pid!),
    stop: async () => {
      for (const child of children) child.kill("SIGTERM");
      const timer = setTimeout(() => children.forEach((c) => killGroup(c)), 5_000);
      await Promise.all(children.map(exited));
      clearTimeout(timer);
      children.forEach((c) => killGroup(c));
    },
  };
}

/** The bullmq peer's name (bench-targets.ts compares roomgate with it). */
export const BULLMQ_ARM = "grammY + bullmq, bot + worker";

/** BENCH_CPU_PROF=<dir>: node's own CPU profile of each process of an arm, written there at exit. */
function cpuProfile(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

/**
 * `roomgate start` as an operator runs it, with `extra` config (raised limits) merged
 * in, and `workers` more `roomgate worker` processes beside it.
 */
export async function startRoomgate(
  name: string,
  target: ArmTarget,
  extra: Record<string, unknown>,
  workers = 0,
  startFlags: string[] = [],
): Promise<Arm> {
  const fleet = new RoomgateFleet({
    dir: mkdtempSync(join(target.dir, "roomgate-")),
    ...(target.clusterNodes
      ? { redis: { cluster: { nodes: target.clusterNodes } } }
      : { redisUrl: target.redisUrl }),
    apiRoot: target.apiRoot,
    token: target.token,
    users: target.chats,
    groups: [],
    extra,
  });
  await fleet.launch("start", "start", startFlags);
  for (let i = 1; i <= workers; i += 1) await fleet.launch(`worker-${i}`, "worker");
  // A backlog left after the bound is not drained: the next arm starts on a flushed Redis.
  return { name, usesRedis: true, pids: () => fleet.pids(), stop: () => fleet.stop(3_000) };
}

/** Keeps a child's error output in `file` (the bench's folder; BENCH_KEEP=1 keeps it). */
function logTo(child: ChildProcess, file: string): void {
  const out = createWriteStream(file);
  child.stderr?.pipe(out);
}

function ready(child: ChildProcess, line: RegExp): Promise<void> {
  let seen = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s: ${seen.slice(-500)}`)), 60_000);
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      if (line.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", (chunk: Buffer) => (seen += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`exited (${code}) before ready: ${seen.slice(-500)}`)));
  });
}
