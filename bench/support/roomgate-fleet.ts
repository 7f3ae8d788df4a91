import type { ChildProcess } from "node:child_process";
import { createWriteStream, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify } from "yaml";
import { exited, killGroup, spawnTracked } from "./processes.js";

/** The repository root: roomgate and the echo server run from here. */
export const ROOT = resolve(import.meta.dirname, "../..");

/** The echo namespace as a stdio child of every roomgate process. */
export function echoNamespace(env: Record<string, string> = {}): Record<string, unknown> {
  return {
    command: [process.execPath, "--import", "tsx", join(ROOT, "bench/support/echo-server.ts")],
    cwd: ROOT,
    env,
  };
}

/** What a fleet is started with. */
export interface FleetOptions {
  dir: string;
  /** One instance's URL, or `redis` for another topology. */
  redisUrl?: string;
  /** The `redis` section (a cluster's nodes, a sentinel group); the prefix is added. */
  redis?: Record<string, unknown>;
  apiRoot: string;
  token: string;
  /** Chat ids of the bot's users (a private chat's id is its user's id) and of its groups. */
  users: number[];
  groups: { chat: number; users: number[] }[];
  namespaceEnv?: Record<string, string>;
  /** Extra top-level config (worker concurrency, raised limits…), merged over the defaults. */
  extra?: Record<string, unknown>;
}

type Role = "start" | "worker";

/** One kill -9 of a member: which process, and when (Date.now() just before the signal). */
export interface KillRecord {
  name: string;
  pid: number;
  at: number;
}

/** One `roomgate start` or `roomgate worker` child, with its log in the fleet's folder. */
export interface Member {
  role: Role;
  name: string;
  /** The command's flags (`start --receive-only`), kept for a restart. */
  flags: string[];
  child: ChildProcess;
  /** True once it logged that it runs, until it exits. */
  ready: boolean;
}

/**
 * `roomgate start` and any number of `roomgate worker` processes on one config, run
 * as an operator runs them (a YAML file, the token in the environment), each
 * killable and restartable by name.
 */
export class RoomgateFleet {
  readonly members = new Map<string, Member>();
  /** Every kill -9, with the process id and the wall-clock time just before the signal. */
  readonly kills: KillRecord[] = [];
  private readonly configFile: string;
  private restarts = 0;
  private readonly logs: Promise<void>[] = [];

  constructor(private readonly options: FleetOptions) {
    this.configFile = join(options.dir, "config.yaml");
    const config = {
      redis: { ...(options.redis ?? { url: options.redisUrl }), prefix: "rg" },
      namespaces: { echo: echoNamespace(options.namespaceEnv) },
      // A load is a few "people" sending far faster than anyone types: inbound flood control is off.
      limits: { turnsPerMinute: 1_000_000, roomQueueCap: 1_000_000 },
      telegram: {
        apiRoot: options.apiRoot,
        bots: [
          { token: "${BENCH_BOT_TOKEN}", namespace: "echo", users: options.users, groups: options.groups },
        ],
      },
    };
    writeFileSync(this.configFile, stringify(merge(config, options.extra ?? {})));
  }

  /** Starts a member and waits until it logs that it runs. */
  async launch(name: string, role: Role, flags: string[] = []): Promise<Member> {
    const log = createWriteStream(join(this.options.dir, `${name}.${this.restarts++}.log`));
    // FAULTS_LOG_LEVEL=debug keeps every process' debug lines in its log (for a run kept with --keep).
    const level = process.env.FAULTS_LOG_LEVEL ?? "info";
    const env: NodeJS.ProcessEnv = { ...process.env, BENCH_BOT_TOKEN: this.options.token, LOG_LEVEL: level };
    // The config names the Redis; an inherited REDIS_URL would win over it.
    delete env.REDIS_URL;
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every roomgate process there (node --cpu-prof).
    const profile = process.env.BENCH_CPU_PROF
      ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [];
    const args = [...profile, join(ROOT, "bin/roomgate"), role, ...flags, "-c", this.configFile];
    const child = spawnTracked(process.execPath, args, { cwd: ROOT, env });
    const member: Member = { role, name, flags, child, ready: false };
    child.once("exit", () => (member.ready = false));
    this.members.set(name, member);
    // The log ends once both of the child's output streams closed, so that a reader
    // of the folder after `logsWritten` sees every line.
    child.stdout?.pipe(log, { end: false });
    child.once("close", () => log.end());
    this.logs.push(new Promise<void>((resolveLog) => log.once("close", () => resolveLog())));
    let seen = "";
    const ready = new Promise<void>((resolvePromise, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not start in 60 s (log ${log.path})`)),
        60_000,
      );
      child.stderr?.on("data", (chunk: Buffer) => {
        log.write(chunk);
        if (seen !== "ready") {
          seen += chunk.toString();
          if (/"msg":"roomgate (worker )?started"/.test(seen)) {
            seen = "ready";
            member.ready = true;
            clearTimeout(timer);
            resolvePromise();
          }
        }
      });
      child.once("exit", (code, signal) => {
        clearTimeout(timer);
        const tail = seen === "ready" ? "" : seen.split("\n").slice(-3).join("\n");
        reject(new Error(`${name} exited at start (${code ?? signal}); log ${String(log.path)}\n${tail}`));
      });
    });
    await ready;
    return member;
  }

  /** kill -9 of one member (its namespace child sees its stdin close and exits). */
  async kill(name: string): Promise<void> {
    const member = this.members.get(name);
    if (!member) return;
    if (member.child.pid !== undefined) this.kills.push({ name, pid: member.child.pid, at: Date.now() });
    member.child.kill("SIGKILL");
    await exited(member.child);
  }

  /** SIGTERM to every member, then SIGKILL of their groups after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    const all = [...this.members.values()].map((m) => m.child);
    for (const child of all) child.kill("SIGTERM");
    const timer = setTimeout(() => all.forEach((c) => killGroup(c)), graceMs);
    await Promise.all(all.map(exited));
    clearTimeout(timer);
    all.forEach((c) => killGroup(c));
  }

  /** Resolves once the log file of every member that exited is complete on disk. */
  async logsWritten(): Promise<void> {
    await Promise.all(this.logs);
  }

  /** Pids of the members running now. */
  pids(): number[] {
    return [...this.members.values()]
      .filter((m) => m.child.exitCode === null && m.child.signalCode === null)
      .map((m) => m.child.pid!);
  }
}

/** `over` merged into `base`, objects key by key (so a `telegram.limits` keeps the bots). */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const mine = out[key];
    const bothObjects = [mine, value].every((v) => v !== null && typeof v === "object" && !Array.isArray(v));
    out[key] = bothObjects ? merge(mine as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}
