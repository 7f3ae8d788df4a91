import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_NAMESPACES } from "../../src/demo/server.js";
import { waitFor } from "../support/wait.js";

const state = mkdtempSync(join(tmpdir(), "roomgate-demo-"));

function demo(input: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: state, ...env };
  delete childEnv.REDIS_URL;
  return spawnSync(process.execPath, ["bin/roomgate", "demo", ...args], {
    input,
    env: childEnv,
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("roomgate demo, scripted through a pipe", () => {
  afterAll(() => rmSync(state, { recursive: true, force: true }));

  it("prints the digest answer line and its item links, and no JSON", () => {
    const run = demo("what should I read today?\n");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("Today's digest: 3 items worth reading");
    expect(run.stdout).toContain("https://arxiv.org/abs/2408.01234");
    expect(run.stdout).not.toMatch(/[{}[\]]"|"ok"/);
  });

  it("chooses an option by its number and continues the conversation after a restart", () => {
    const first = demo("show me the feed\n1\n", ["--room", "pick"]);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain("1. Current feed (feed.list)");
    expect(first.stdout).toContain("→ Current feed (feed.list)");
    const conversation = /Conversation: (\S+)/;
    const a = demo("/status\n", ["--room", "pick"]);
    const b = demo("/status\n", ["--room", "pick"]);
    expect(a.stdout).toMatch(/Enabled tools: .*feed\.list/);
    expect(conversation.exec(a.stdout)![1]).toBe(conversation.exec(b.stdout)![1]);
  });

  it("opens a terminal room on another demo namespace", () => {
    const run = demo("which arm of my sweep won?\n", ["--namespace", "runs"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("kdsweep by WER");
    expect(run.stdout).toContain("Caveat");
  });

  it("speaks of a terminal in /help (choose by number, no button), and /tools counts what it lists", () => {
    const run = demo("/help\n/tools\n", ["--room", "words"]);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("choose an option by sending its number.");
    expect(run.stdout).not.toMatch(/button|reaction/i);
    const listed = run.stdout.split("\n").filter((l) => l.startsWith("• feed.")).length;
    expect(run.stdout).toContain(`feed has ${listed} tools:`);
    expect(run.stdout).toContain(`Now enabled in this conversation: the ${listed} tools of "feed", plus`);
  });

  it("lists every demo namespace in demo --help", () => {
    const run = spawnSync(process.execPath, ["bin/roomgate", "demo", "--help"], { encoding: "utf8" });
    const listed = /\(([a-z, ]+)\) \(default: "feed"\)/.exec(run.stdout.replace(/\s+/g, " "))?.[1];
    expect(listed?.split(", ")).toEqual(expect.arrayContaining([...DEMO_NAMESPACES, "mesh"]));
  });

  it("says in one line how to install redis-server when it is missing", () => {
    // A PATH with node and nothing else, wherever node is installed.
    const bin = join(state, "bin-node-only");
    mkdirSync(bin, { recursive: true });
    symlinkSync(process.execPath, join(bin, "node"));
    const run = demo("hello\n", [], { PATH: bin });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain("apt-get install -y redis-server");
  });
});

/**
 * A Node older than roomgate needs, outside the checkout: the system's, on a machine where
 * setup.sh put the pinned Node 24 in .node/ (CI's, and this project's own build box).
 */
function olderNode(): { path: string; version: string } | undefined {
  const checkout = resolve(".");
  for (const dir of [...(process.env.PATH ?? "").split(delimiter), "/usr/local/bin", "/usr/bin"]) {
    const path = join(dir, "node");
    if (dir === "" || resolve(dir).startsWith(checkout) || !existsSync(path)) continue;
    const version = spawnSync(path, ["--version"], { encoding: "utf8" }).stdout.trim();
    if (Number(/^v(\d+)\./.exec(version)?.[1]) < 22) return { path, version };
  }
  return undefined;
}

const older = olderNode();
// Only where setup.sh put Node 24 in .node/: a machine whose own Node is new enough has none.
const skipped = older === undefined || !existsSync(".node/bin/node");

describe.skipIf(skipped)(`bin/roomgate started by an older Node (${older?.version})`, () => {
  it("runs the demo on the pinned Node 24 in .node/ and answers", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, ROOMGATE_STATE_DIR: state };
    delete env.REDIS_URL;
    const child = spawn(older!.path, ["bin/roomgate", "demo"], { env });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((done) => child.once("exit", done));
    try {
      child.stdin.write("what should I read today?\n");
      await waitFor(() => out.includes("Today's digest: 3 items worth reading"), 30_000, "the answer");
      // The old Node only hands over: its one child, the process that answered, is .node's Node 24.
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim();
      const runtime = readlinkSync(`/proc/${children.split(" ")[0]}/exe`);
      expect(runtime).toBe(realpathSync(".node/bin/node"));
      expect(spawnSync(runtime, ["--version"], { encoding: "utf8" }).stdout).toMatch(/^v24\./);
    } finally {
      child.stdin.end();
    }
    expect(await exited, out).toBe(0);
  }, 60_000);
});
