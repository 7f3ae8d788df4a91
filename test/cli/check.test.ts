import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_SERVER } from "../support/spine.js";

function check(args: string[]) {
  return spawnSync(process.execPath, ["bin/roomgate", "check", ...args], {
    encoding: "utf8",
    timeout: 30_000,
  });
}

describe("roomgate check", () => {
  it("passes a conforming namespace", () => {
    const run = check(["-n", "runs"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("PASS  runs.ask declares an outputSchema");
    expect(run.stdout).toContain("runs: conforms");
  });

  it("fails a namespace whose router returns malformed Answers, saying what is wrong", () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-check-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      `namespaces:\n  feed:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(DEMO_SERVER)}]\n    env: { ATTEST_TOOLS: feed, DEMO_MALFORMED: "1" }\n`,
    );
    const run = check(["-c", config, "-n", "feed", "-q", "what should I read today?"]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("FAIL  feed.ask declares no outputSchema");
    expect(run.stdout).toMatch(/FAIL {2}"what should I read today\?" → not a valid Answer\n {6}ok: /);
  });
});
