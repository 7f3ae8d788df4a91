import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";

// docs/routers.md promises that both minimal routers keep the Answer contract and
// work in a room; these run them exactly as the page says.
const SERVERS = {
  typescript: ["node", "examples/routers/notes-router.ts"],
  python: ["python3", "examples/routers/notes_router.py"],
} as const;

const state = mkdtempSync(join(tmpdir(), "roomgate-routers-"));
afterAll(() => rmSync(state, { recursive: true, force: true }));

function roomgate(args: string[], input = "") {
  return spawnSync(process.execPath, ["bin/roomgate", ...args], {
    input,
    env: { ...process.env, ROOMGATE_STATE_DIR: state, REDIS_URL: inject("redisUrl") },
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe.each(Object.entries(SERVERS))("the minimal %s router of docs/routers.md", (language, command) => {
  it("meets the Answer contract by `roomgate check --require answer`", () => {
    const run = roomgate([
      "check",
      "--command",
      command.join(" "),
      "--prefix",
      "notes.",
      "--require",
      "answer",
    ]);
    expect(run.stdout).toContain("server: conforms (meets MCP basics and the Answer contract)");
    expect(run.status).toBe(0);
  });

  it("asks back in a terminal room, and option 1 runs notes.recent with its items and caveat", () => {
    const config = join(state, `${language}.yaml`);
    writeFileSync(
      config,
      `redis: { prefix: r${randomBytes(4).toString("hex")} }\nnamespaces:\n  notes:\n    command: ${JSON.stringify(command)}\n`,
    );
    const run = roomgate(["shell", "-c", config, "-n", "notes", "--room", language], "what is new?\n1\n");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Do you want the latest notes or a search?");
    expect(run.stdout).toContain("1. Recent notes (notes.recent)");
    expect(run.stdout).toContain("The latest notes.");
    expect(run.stdout).toContain("https://example.org/notes/2");
    expect(run.stdout).toContain("Only the last two are kept.");
  });
});
