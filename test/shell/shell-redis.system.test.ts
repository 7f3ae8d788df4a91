import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { freePort, RedisServer } from "../../src/sessions/redis-server.js";
import { DEMO_SERVER } from "../support/spine.js";
import { waitFor } from "../support/wait.js";

const dir = mkdtempSync(join(tmpdir(), "rg-shell-redis-"));
const config = join(dir, "config.yaml");
writeFileSync(
  config,
  stringify({
    namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `roomgate shell` as a script runs it: lines on stdin, then end of input. */
function shell(redisUrl: string) {
  const child = spawn(process.execPath, ["bin/roomgate", "shell", "-c", config, "-n", "feed"], {
    env: { ...process.env, REDIS_URL: redisUrl, ROOMGATE_STATE_DIR: join(dir, "state") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, exited, out: () => out, err: () => err };
}

describe("roomgate shell and its Redis", () => {
  it("says when Redis is not reachable at start, and exits non-zero", async () => {
    const s = shell(`redis://127.0.0.1:${await freePort()}`);
    s.child.stdin.end("what should I read today?\n");
    expect(await s.exited).not.toBe(0);
    expect(s.err()).toMatch(/redis 127\.0\.0\.1:\d+ did not answer within 5 s \(.*ECONNREFUSED.*\)/);
  }, 30_000);

  it("says which line could not be queued when Redis goes away, says the outage, and exits non-zero at the end", async () => {
    const redis = await RedisServer.start({ dir: join(dir, "redis") });
    const s = shell(redis.url);
    s.child.stdin.write("what should I read today?\n");
    await waitFor(() => s.out().length > 0, 20_000, "the shell's first output");
    await redis.kill();
    s.child.stdin.end("and tomorrow?\n");
    expect(await s.exited).toBe(1);
    expect(s.out()).toContain('roomgate: "and tomorrow?" was not queued (Redis did not answer within 10 s)');
    expect(s.err()).toMatch(/redis 127\.0\.0\.1:\d+ is not reachable .*; retrying/);
  }, 45_000);
});
