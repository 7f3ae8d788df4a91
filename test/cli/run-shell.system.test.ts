import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "roomgate-shell-program-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function shell(command: string[]) {
  const config = join(dir, "roomgate.yaml");
  writeFileSync(config, `namespaces:\n  tools:\n    command: ${JSON.stringify(command)}\n`);
  const env: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: join(dir, "state") };
  delete env.REDIS_URL;
  return spawnSync(process.execPath, ["bin/roomgate", "shell", "-c", config, "-n", "tools"], {
    input: "hello\n",
    env,
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("roomgate shell on a namespace whose program is missing", () => {
  it("says so in one line with the fix and exits 1, before any room opens", () => {
    const run = shell(["/no/such/binary", "--stdio"]);
    expect(run.stderr).toBe(
      'roomgate: namespace "tools": the program /no/such/binary is not found (install it, or give its full path in namespaces.tools.command)\n',
    );
    expect(run.stdout).toBe("");
    expect(run.status).toBe(1);
  });

  it("looks a bare name up on PATH", () => {
    const run = shell(["roomgate-no-such-tool"]);
    expect(run.stderr).toContain("the program roomgate-no-such-tool is not found on PATH");
    expect(run.status).toBe(1);
  });
});
