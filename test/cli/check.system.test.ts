import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startContractBreaker } from "../support/contract-breaker.js";
import { EVERYTHING, startEverythingHttp, type EverythingHttp } from "../support/everything.js";
import { DEMO_SERVER } from "../support/spine.js";

function check(args: string[]) {
  return spawnSync(process.execPath, ["bin/roomgate", "check", ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
}

/** For servers in this process: the check must not block the event loop that serves them. */
async function checkAsync(args: string[]): Promise<{ status: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["bin/roomgate", "check", ...args], {
      timeout: 60_000,
    });
    return { status: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { status: e.code, stdout: e.stdout };
  }
}

describe("roomgate check", () => {
  let http: EverythingHttp;
  beforeAll(async () => {
    http = await startEverythingHttp();
  });
  afterAll(async () => {
    await http.stop();
  });

  it("passes a conforming namespace at both levels", () => {
    const run = check(["-n", "runs"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("PASS  calls the read-only tool runs.");
    expect(run.stdout).toContain("PASS  runs.ask declares an outputSchema");
    expect(run.stdout).toContain("PASS  answers a question it cannot answer with ok:false");
    expect(run.stdout).toContain('PASS  restricted: the server lists only "runs." tools');
    expect(run.stdout).toContain('PASS  "help" twice → the same Answer');
    expect(run.stdout).toContain("runs: conforms (meets MCP basics and the Answer contract)");
  });

  it("passes server-everything over stdio at the MCP basics level, with exit 0", async () => {
    const run = await checkAsync(["--command", `${process.execPath} ${EVERYTHING} stdio`]);
    expect(run.stdout).toMatch(/PASS {2}lists \d+ tools\n/);
    expect(run.stdout).toContain("PASS  every input schema is a valid JSON Schema object");
    expect(run.stdout).toMatch(/PASS {2}calls the read-only tool /);
    expect(run.stdout).toContain("SKIP  the Answer contract does not apply: it lists no router ask");
    expect(run.stdout).toContain("server: usable through /tools and /call (meets MCP basics)");
    expect(run.status).toBe(0);
    const strict = await checkAsync([
      "--command",
      `${process.execPath} ${EVERYTHING} stdio`,
      "--require",
      "answer",
    ]);
    expect(strict.status).toBe(1);
    // Its last line agrees with its exit code: not "usable" when the required level is not met.
    const verdict = strict.stdout.trim().split("\n").at(-1);
    expect(verdict).toBe(
      "server: does not meet --require answer: it has no router to keep the Answer contract; it meets MCP basics only",
    );
  });

  it("never calls a tool that would reveal the server's environment (get-env) for its read-only probe", async () => {
    const run = await checkAsync(["--command", `${process.execPath} ${EVERYTHING} stdio`]);
    expect(run.stdout).toMatch(/PASS {2}calls the read-only tool /);
    expect(run.stdout).not.toContain("get-env");
  });

  it("without -c or -n checks every demo namespace", () => {
    const run = spawnSync(process.execPath, [join(process.cwd(), "bin/roomgate"), "check"], {
      encoding: "utf8",
      timeout: 120_000,
      cwd: mkdtempSync(join(tmpdir(), "rg-nocfg-")),
      env: { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "rg-xdg-")) },
    });
    for (const ns of ["feed", "runs", "kg", "sym"]) {
      expect(run.stdout).toContain(`== ${ns} ==`);
      expect(run.stdout).toContain(`${ns}: conforms (meets MCP basics and the Answer contract)`);
    }
    expect(run.stdout).toContain("mesh: usable through /tools and /call (meets MCP basics)");
    expect(run.status).toBe(0);
  }, 120_000);

  it("passes server-everything over Streamable HTTP", async () => {
    const run = await checkAsync(["--url", http.url, "-n", "everything"]);
    expect(run.stdout).toContain("PASS  connects and initializes");
    expect(run.stdout).toContain("everything: usable through /tools and /call (meets MCP basics)");
    expect(run.status).toBe(0);
  });

  it("reports a server that does not start with its cause", () => {
    const run = check(["--command", "/nonexistent/mcp-server --stdio"]);
    expect(run.stdout).toContain("FAIL  does not start: its command was not found");
    expect(run.stdout).toContain("ENOENT");
    expect(run.stdout).toContain("server: not usable");
    expect(run.status).toBe(1);
  });

  it("names the missing prefix of a configured third-party server", () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-check-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      `namespaces:\n  everything:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(EVERYTHING)}, stdio]\n`,
    );
    const run = check(["-c", config, "-n", "everything"]);
    expect(run.stdout).toContain('FAIL  lists no tools under the prefix "everything."');
    expect(run.stdout).toContain('set `prefix: ""` under namespaces.everything');
    expect(run.status).toBe(1);
  });

  it("fails each broken rule of the Answer contract, point by point, and fails the check since the router is found", async () => {
    const broken = await startContractBreaker("answers");
    try {
      const run = await checkAsync(["--url", broken.url, "--prefix", "bad.", "-n", "bad"]);
      expect(run.stdout).toContain("PASS  calls the read-only tool bad.ping");
      expect(run.stdout).toContain("FAIL  bad.ask declares no outputSchema");
      expect(run.stdout).toMatch(/FAIL {2}"zzzz qqqq" → not a valid Answer\n {6}ok: /);
      expect(run.stdout).toContain("FAIL  no probe got an ok:false Answer");
      expect(run.stdout).toContain("FAIL  not restricted: the server also lists tools of other namespaces");
      expect(run.stdout).toContain("other.secret");
      expect(run.stdout).toContain('FAIL  "help" twice → different Answers');
      // Found as bad.ask, the router gets every plain message: a broken contract is a failed check.
      expect(run.stdout).toMatch(
        /bad: not usable as bound: its router bad\.ask breaks the Answer contract \(5 problem/,
      );
      expect(run.stdout).toContain("`ask: false`");
      expect(run.status).toBe(1);
      // Bound without a router, the same server is usable through /tools and /call.
      const unrouted = await checkAsync([
        "--url",
        broken.url,
        "--prefix",
        "bad.",
        "-n",
        "bad",
        "--ask",
        "false",
      ]);
      expect(unrouted.stdout).toContain(
        "SKIP  the Answer contract does not apply: the binding says it has no router",
      );
      expect(unrouted.stdout).toContain("bad: usable through /tools and /call (meets MCP basics)");
      expect(unrouted.status).toBe(0);
    } finally {
      await broken.close();
    }
  });

  it("fails a router that answers every question with an MCP error, saying so", async () => {
    const broken = await startContractBreaker("errors");
    try {
      const run = await checkAsync(["--url", broken.url, "--prefix", "bad.", "-n", "bad"]);
      expect(run.stdout).toMatch(
        /FAIL {2}"[^"]+" → the router answered with an error \(isError\), not an Answer with ok:false\n {6}the index is down/,
      );
      expect(run.stdout).toMatch(/bad: not usable as bound: its router bad\.ask breaks the Answer contract/);
      expect(run.status).toBe(1);
    } finally {
      await broken.close();
    }
  });

  it("fails a server whose input schemas are invalid at the basics level", async () => {
    const broken = await startContractBreaker("schemas");
    try {
      const run = await checkAsync(["--url", broken.url]);
      expect(run.stdout).toContain("FAIL  1 tool(s) have an invalid input schema");
      expect(run.stdout).toContain('bad.ask: inputSchema.type is not "object"');
      expect(run.status).toBe(1);
    } finally {
      await broken.close();
    }
  });

  it("fails a binding that names a router (`ask:`) without outputSchema and with malformed Answers", () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-check-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      `namespaces:\n  feed:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(DEMO_SERVER)}]\n    env: { ATTEST_TOOLS: feed, DEMO_MALFORMED: "1" }\n    ask: feed.ask\n`,
    );
    const run = check(["-c", config, "-n", "feed", "-q", "what should I read today?"]);
    expect(run.stdout).toContain("FAIL  feed.ask declares no outputSchema");
    expect(run.stdout).toContain("feed: not usable as bound: its router feed.ask breaks the Answer contract");
    expect(run.status).toBe(1);
  });

  it("fails a binding whose configured router the server does not list", () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-check-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      `namespaces:\n  feed:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(DEMO_SERVER)}]\n    env: { ATTEST_TOOLS: feed }\n    ask: feed.route\n`,
    );
    const run = check(["-c", config, "-n", "feed"]);
    expect(run.stdout).toContain(
      "FAIL  the binding names the router feed.route, which the server does not list",
    );
    expect(run.status).toBe(1);
  });

  it("fails a namespace whose router returns malformed Answers when the Answer contract is required", () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-check-"));
    const config = join(dir, "config.yaml");
    writeFileSync(
      config,
      `namespaces:\n  feed:\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(DEMO_SERVER)}]\n    env: { ATTEST_TOOLS: feed, DEMO_MALFORMED: "1" }\n`,
    );
    const run = check(["-c", config, "-n", "feed", "--require", "answer", "-q", "what should I read today?"]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("FAIL  feed.ask declares no outputSchema");
    expect(run.stdout).toMatch(/FAIL {2}"what should I read today\?" → not a valid Answer\n {6}ok: /);
  });
});
