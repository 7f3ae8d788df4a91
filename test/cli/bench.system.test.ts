import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("roomgate bench --smoke", () => {
  it("runs the floor and roomgate start against the stand-in and prints one table with ratios to the floor", () => {
    const env = { ...process.env };
    delete env.REDIS_URL;
    const run = spawnSync(process.execPath, ["bin/roomgate", "bench", "--smoke"], {
      encoding: "utf8",
      env,
      timeout: 150_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const rows = run.stdout.split("\n").filter((l) => l.startsWith("| 50/s |"));
    expect(rows).toHaveLength(2);
    const [floor, roomgate] = rows.map((r) => r.split("|").map((c) => c.trim()));
    expect(floor![2]).toBe("floor bot.start()");
    expect(floor![3]).toBe("100/100");
    expect(roomgate![2]).toBe("roomgate, default limits");
    expect(roomgate![3]).toBe("100/100");
    // p50, p99 and CPU per turn as ratios to the floor's; Redis round trips per turn counted.
    expect(roomgate![13]).toMatch(/^\d+\.\d\d×$/);
    expect(roomgate![14]).toMatch(/^\d+\.\d\d×$/);
    expect(roomgate![17]).toMatch(/^\d+\.\d\d×$/);
    expect(Number(roomgate![9])).toBeGreaterThan(0);
  }, 160_000);
});
