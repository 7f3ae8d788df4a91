import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EVERYTHING_COMMAND } from "../support/everything.js";

const state = mkdtempSync(join(tmpdir(), "roomgate-shell-everything-"));
const config = join(state, "config.yaml");
writeFileSync(
  config,
  `namespaces:\n  everything:\n    command: ${JSON.stringify(EVERYTHING_COMMAND)}\n    prefix: ""\n    ask: false\n    tools: { confirm: ["toggle-*"] }\n`,
);

function shell(input: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: state };
  delete env.REDIS_URL;
  return spawnSync(
    process.execPath,
    ["bin/roomgate", "shell", "-c", config, "-n", "everything", "--room", "media"],
    {
      input,
      env,
      encoding: "utf8",
      timeout: 90_000,
    },
  );
}

describe("roomgate shell on server-everything, scripted through a pipe", () => {
  afterAll(() => rmSync(state, { recursive: true, force: true }));

  it("saves an image under the state folder and prints its path; progress lines; y approves", () => {
    const run = shell(
      "/tools\n/call get-tiny-image\n/call trigger-long-running-operation duration=1 steps=2\n/call toggle-subscriber-updates\ny\n",
    );
    expect(run.status).toBe(0);
    const saved = /📎 image get-tiny-image-2\.png \(image\/png, \d+ bytes\) saved to (\S+)/.exec(run.stdout);
    expect(saved).not.toBeNull();
    expect(saved![1]!.startsWith(join(state, "files", "media"))).toBe(true);
    expect(existsSync(saved![1]!)).toBe(true);
    expect(readFileSync(saved![1]!).subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(run.stdout).toContain("⏳ Trigger Long Running Operation Tool: 1/2 (50%)");
    expect(run.stdout).toContain("✓ Trigger Long Running Operation Tool: finished");
    expect(run.stdout).toContain("which this room's configuration asks to confirm");
    expect(run.stdout).toContain("→ Approve");
    expect(run.stdout).toMatch(/Started simulated resource updates|subscri/i);
  });
});
