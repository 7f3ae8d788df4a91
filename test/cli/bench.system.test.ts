import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("roomgate bench --smoke", () => {
  it("runs the floor, the grammY + bullmq peer and roomgate against the stand-in and prints one table with ratios to the floor", () => {
    const env = { ...process.env };
    delete env.REDIS_URL;
    const run = spawnSync(process.execPath, ["bin/roomgate", "bench", "--smoke"], {
      encoding: "utf8",
      env,
      timeout: 150_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const rows = run.stdout.split("\n").filter((l) => l.startsWith("| 50/s |"));
    const cells = rows.map((r) => r.split("|").map((c) => c.trim()));
    // One row per arm, each answering every message: the floor, the peer, roomgate alone and as a pair.
    expect(cells.map((c) => c[2])).toEqual([
      "floor bot.start()",
      "grammY + bullmq, bot + worker",
      "roomgate, default limits",
      "roomgate, limits raised, start + 1 worker",
    ]);
    for (const arm of cells) expect(arm[3], arm[2]).toBe("100/100");
    const roomgate = cells[2];
    // p50, p99 and CPU per turn as ratios to the floor's; Redis round trips per turn counted.
    expect(roomgate![13]).toMatch(/^\d+\.\d\d×$/);
    expect(roomgate![14]).toMatch(/^\d+\.\d\d×$/);
    expect(roomgate![17]).toMatch(/^\d+\.\d\d×$/);
    expect(Number(roomgate![9])).toBeGreaterThan(0);
  }, 160_000);
});
