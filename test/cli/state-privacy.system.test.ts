import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisServersIn } from "../../src/cli/redis-dir-lock.js";
import { startFloodHttpServer, type FloodHttpServer } from "../support/hostile/flood-http-server.js";
import { eventually } from "../support/wait.js";

let server: FloodHttpServer;
let state: string;
let child: ChildProcessWithoutNullStreams;
let stdout = "";
let config: string;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every folder and file under `root` with its permission bits. */
function modes(root: string): { path: string; dir: boolean; mode: number }[] {
  const found: { path: string; dir: boolean; mode: number }[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    found.push({ path, dir: stat.isDirectory(), mode: stat.mode & 0o777 });
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(root);
  return found;
}

beforeAll(async () => {
  server = await startFloodHttpServer(1);
  state = mkdtempSync(join(tmpdir(), "roomgate-private-"));
  // State left by an older version, readable by everyone.
  chmodSync(state, 0o755);
  for (const dir of ["redis", "logs", "files/old-room"])
    mkdirSync(join(state, dir), { recursive: true, mode: 0o755 });
  writeFileSync(join(state, "logs", "roomgate.log"), "an old log line\n", { mode: 0o644 });
  writeFileSync(join(state, "files", "old-room", "report.txt"), "an old file\n", { mode: 0o644 });
  config = join(mkdtempSync(join(tmpdir(), "roomgate-private-config-")), "config.yaml");
  writeFileSync(config, `namespaces:\n  h:\n    url: ${server.url}\n`);
  const env: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: state };
  delete env.REDIS_URL;
  // The embedded default: no REDIS_URL, so roomgate starts its own redis-server in the state folder.
  child = spawn(process.execPath, ["bin/roomgate", "shell", "-c", config, "-n", "h"], { env, stdio: "pipe" });
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stdin.write("a conversation nobody else may read\n");
  await eventually(() => expect(stdout).toContain("pong: a conversation nobody else may read"), 30_000);
});

afterAll(async () => {
  if (child.exitCode === null) child.kill("SIGKILL");
  for (const pid of redisServersIn(join(state, "redis"))) process.kill(pid, "SIGKILL");
  await server.close();
  rmSync(state, { recursive: true, force: true });
});

describe("#5 the state folder is private to the service user", () => {
  it("#5 keeps every folder 0700 and every file 0600, Redis' append-only files and folders that existed included", async () => {
    // Redis writes its append-only files as the turn is stored; wait until they are there.
    await eventually(() => expect(readdirSync(join(state, "redis"))).toContain("appendonlydir"), 10_000);
    const all = modes(state);
    expect(all.filter((e) => e.path.includes("appendonlydir") && !e.dir).length).toBeGreaterThan(0);
    const open = all.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));
    expect(open.map((e) => `${e.path} ${e.mode.toString(8)}`)).toEqual([]);
  });
});

describe("operator commands beside a running process with the embedded Redis", () => {
  it("use the Redis it runs instead of refusing the busy state folder", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: state };
    delete env.REDIS_URL;
    const run = spawnSync(
      process.execPath,
      ["bin/roomgate", "audit", "export", "-c", config, "--since", "1h"],
      {
        env,
        encoding: "utf8",
      },
    );
    expect(run.stderr).not.toContain("in use");
    expect(run.status).toBe(0);
  });
});

describe("#1 the embedded redis-server dies with its parent", () => {
  it("#1 is not left running when the roomgate process is killed outright", async () => {
    const redis = redisServersIn(join(state, "redis"));
    expect(redis).toHaveLength(1);
    // SIGKILL: no exit handler runs, as after an out-of-memory abort.
    child.kill("SIGKILL");
    await eventually(() => expect(alive(redis[0]!)).toBe(false), 10_000);
  });
});
