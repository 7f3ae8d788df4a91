import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testRedis } from "../support/redis.js";

describe("library warnings in a terminal room", () => {
  it("never reach the terminal: ajv knows common formats and logs the rest", async () => {
    const db = await testRedis();
    const state = mkdtempSync(join(tmpdir(), "rg-warn-"));
    const config = join(state, "config.yaml");
    writeFileSync(
      config,
      [
        `redis: { prefix: ${db.prefix} }`,
        "namespaces:",
        "  fmt:",
        `    command: [${process.execPath}, ${join(process.cwd(), "test/support/format-server.mjs")}]`,
      ].join("\n"),
    );
    const run = spawnSync(process.execPath, ["bin/roomgate", "shell", "-c", config, "-n", "fmt"], {
      input: "/tools\n/call fmt.fetch url=not-a-uri\n/call fmt.fetch url=https://example.org tag=x\n",
      env: { ...process.env, REDIS_URL: db.url, ROOMGATE_STATE_DIR: state, LOG_LEVEL: "debug" },
      encoding: "utf8",
      timeout: 60_000,
    });
    await db.cleanup();
    expect(run.status).toBe(0);
    // "uri" is a known format now: a bad url is a clear message, not a call.
    expect(run.stdout).toContain('url must match format "uri"');
    expect(run.stdout).toContain("fetched https://example.org");
    const terminal = run.stdout + run.stderr;
    expect(terminal).not.toMatch(/unknown format/i);
    expect(run.stderr).toBe("");
    const log = readFileSync(join(state, "logs", "roomgate.log"), "utf8");
    expect(log).toMatch(/unknown format \\?"x-house-style\\?" ignored/);
  }, 60_000);
});
