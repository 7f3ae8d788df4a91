import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { EVERYTHING } from "../support/everything.js";
import { mcp26Server, type ServerRevision } from "../support/mcp-2026/harness.js";
import { WAIT_MS, waitFor } from "../support/wait.js";

// `roomgate check` names the MCP revision a server speaks and grades it on each one it
// speaks: the SDK v2 test server as a dual-revision server, a 2026-07-28-only one and a
// 2025-11-25-only one, and server-everything (a 2025-11-25 server).

async function check(args: string[]): Promise<{ status: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/roomgate", "check", ...args], {
      timeout: 90_000,
    });
    return { status: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { status: e.code, stdout: e.stdout };
  }
}

/** A config file binding the test server, speaking `revision`, as namespace `mt`. */
function configFor(revision: ServerRevision, server = mcp26Server(revision)): string {
  const file = join(mkdtempSync(join(tmpdir(), "roomgate-check-")), "roomgate.yaml");
  writeFileSync(file, stringify({ namespaces: { mt: server.namespace } }));
  return file;
}

/** True while process `pid` runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// Each test runs `roomgate check`, which starts the server once per revision it grades.
describe("roomgate check on both MCP revisions", () => {
  it("a server speaking both: uses 2026-07-28, grades it on both, exit 0", async () => {
    const run = await check(["-c", configFor("both"), "-n", "mt"]);
    expect(run.stdout).toContain(
      [
        "MCP revision",
        "PASS  speaks 2026-07-28, the newest revision; roomgate uses it",
        "PASS  offers the Tasks extension (io.modelcontextprotocol/tasks)",
        "PASS  also serves 2025-11-25 clients",
      ].join("\n"),
    );
    expect(run.stdout).toContain(
      "MCP basics (2026-07-28)\nPASS  connects and discovers it (server/discover)",
    );
    expect(run.stdout).toContain("MCP basics (2025-11-25)\nPASS  connects and initializes");
    expect(run.stdout).toContain("Answer contract (2026-07-28)\nPASS  has the router mt.ask");
    expect(run.stdout).toContain("PASS  calls the read-only tool mt.status");
    expect(run.stdout).toContain(
      "mt: conforms (meets MCP basics and the Answer contract) on 2026-07-28\n" +
        "mt: conforms (meets MCP basics and the Answer contract) on 2025-11-25",
    );
    expect(run.status).toBe(0);
  }, 60_000);

  it("a 2026-07-28-only server: a warning that older clients cannot use it, exit 0, no server left running", async () => {
    const server = mcp26Server("2026-07-28");
    const run = await check(["-c", configFor("2026-07-28", server), "-n", "mt"]);
    expect(run.stdout).toContain("PASS  speaks 2026-07-28, the newest revision; roomgate uses it");
    expect(run.stdout).toContain(
      "WARN  does not serve 2025-11-25 clients (it does not speak that MCP revision); roomgate does not need it, older clients do",
    );
    expect(run.stdout).not.toContain("MCP basics (2025-11-25)");
    // The process that refused the 2025-11-25 client (it no longer reads its stdin) is ended too.
    const started = server.events("started").map((e) => e.pid);
    expect(started.length).toBeGreaterThanOrEqual(2);
    await waitFor(
      () => started.every((pid) => !alive(pid)),
      WAIT_MS,
      "every server process check started to end",
    );
    expect(run.stdout.trim().split("\n").at(-1)).toBe(
      "mt: conforms (meets MCP basics and the Answer contract)",
    );
    expect(run.status).toBe(0);
  }, 60_000);

  it("a 2025-11-25-only server: graded on 2025-11-25, 2026-07-28 not offered", async () => {
    const run = await check(["-c", configFor("2025-11-25"), "-n", "mt"]);
    expect(run.stdout).toContain(
      "PASS  speaks 2025-11-25; roomgate uses it\n" +
        "SKIP  2026-07-28: not offered (the server answered the server/discover probe as a 2025-11-25 server)",
    );
    expect(run.stdout).toContain("MCP basics (2025-11-25)\nPASS  connects and initializes");
    expect(run.stdout).not.toContain("(2026-07-28)\n");
    expect(run.stdout.trim().split("\n").at(-1)).toBe(
      "mt: conforms (meets MCP basics and the Answer contract)",
    );
    expect(run.status).toBe(0);
  }, 60_000);

  it("server-everything speaks 2025-11-25", async () => {
    const run = await check(["--command", `${process.execPath} ${EVERYTHING} stdio`]);
    expect(run.stdout).toContain("PASS  speaks 2025-11-25; roomgate uses it");
    expect(run.stdout).toContain("server: usable through /tools and /call (meets MCP basics)");
    expect(run.status).toBe(0);
  }, 60_000);
});
