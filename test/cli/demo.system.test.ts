import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

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
