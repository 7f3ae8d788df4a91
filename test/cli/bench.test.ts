import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("roomgate bench", () => {
  it("prints both arms side by side with ratios against the baseline", () => {
    const env = { ...process.env };
    delete env.REDIS_URL;
    const run = spawnSync(process.execPath, ["bin/roomgate", "bench", "--turns", "20", "--rooms", "2"], {
      encoding: "utf8",
      env,
      timeout: 60_000,
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/direct namespace calls +20 +[\d.]+ +[\d.]+ +[\d.]+ +\d+/);
    expect(run.stdout).toMatch(/roomgate pipeline +20 +[\d.]+/);
    expect(run.stdout).toMatch(/ratio pipeline\/baseline: throughput [\d.]+x, p50 [\d.]+x, p95 [\d.]+x/);
  });
});
