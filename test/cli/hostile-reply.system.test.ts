import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFloodHttpServer, type FloodHttpServer } from "../support/hostile/flood-http-server.js";
import { testRedis, type TestRedis } from "../support/redis.js";

let server: FloodHttpServer;
let db: TestRedis;

beforeAll(async () => {
  server = await startFloodHttpServer(150_000_000);
  db = await testRedis();
});
afterAll(async () => {
  await server.close();
  await db.cleanup();
});

/** `roomgate shell` on the flooding namespace, fed `input` through a pipe, with a heap a small container gives. */
function shell(input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const state = mkdtempSync(join(tmpdir(), "roomgate-flood-"));
  const config = join(state, "config.yaml");
  writeFileSync(config, `redis: { prefix: ${db.prefix} }\nnamespaces:\n  h:\n    url: ${server.url}\n`);
  const child = spawn(
    process.execPath,
    ["--max-old-space-size=128", "bin/roomgate", "shell", "-c", config, "-n", "h"],
    {
      env: { ...process.env, REDIS_URL: db.url, ROOMGATE_STATE_DIR: state },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

describe("#1 a hostile HTTP namespace that replies with 150 MB, through a real roomgate process", () => {
  it("#1 does not kill the process: the person gets one clear line and the next turn is answered", async () => {
    const run = await shell("/tools\n/call h.flood mode=json\n/call h.flood mode=sse\nare you alive?\n");
    expect(run.stderr).not.toContain("heap out of memory");
    expect(run.code).toBe(0);
    expect(
      run.stdout.match(/The reply of h to h\.flood was larger than 20 MB, so it was not read/g),
    ).toHaveLength(2);
    expect(run.stdout).toContain("pong: are you alive?");
    expect(server.floods).toBe(2);
  }, 90_000);
});
