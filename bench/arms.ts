import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
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
    ["--import", "tsx", join(ROOT, "bench/floor-bot.ts"), target.apiRoot, target.token, mode],
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

/** `roomgate start` as an operator runs it, with `extra` config (raised limits) merged in. */
export async function startRoomgate(
  name: string,
  target: ArmTarget,
  extra: Record<string, unknown>,
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
  await fleet.launch("start", "start");
  // A backlog left after the bound is not drained: the next arm starts on a flushed Redis.
  return { name, usesRedis: true, pids: () => fleet.pids(), stop: () => fleet.stop(3_000) };
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
