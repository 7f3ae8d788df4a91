import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testRedis, type TestRedis } from "../support/redis.js";
import { exportedTrail, operatorCommand, teamNamespace } from "../support/team.js";

const team = teamNamespace();
let db: TestRedis;
let config: string;
let env: Record<string, string>;

beforeAll(async () => {
  db = await testRedis();
  const dir = mkdtempSync(join(tmpdir(), "roomgate-shell-roles-"));
  config = join(dir, "config.yaml");
  writeFileSync(
    config,
    stringify({
      redis: { prefix: db.prefix },
      namespaces: { h: team.config },
      shell: {
        rooms: [
          {
            room: "ops",
            name: "shell-ops",
            users: ["alice", "bob"],
            callers: ["alice", "bob"],
            approvers: ["bob"],
            approvals: { by: "approvers", count: 1 },
          },
          {
            room: "change",
            name: "shell-change",
            users: ["alice", "bob", "dave"],
            approvers: ["bob", "dave"],
            approvals: { tools: ["h.wi*"], by: "approvers", count: 2 },
          },
        ],
      },
    }),
  );
  env = { REDIS_URL: db.url, ROOMGATE_STATE_DIR: dir };
});
afterAll(async () => {
  await db.cleanup();
});

/** `user` types `input` into a terminal room ("ops" unless named) (a scripted `roomgate shell`); resolves with what it printed. */
function shellAs(user: string, input: string, room = "ops"): string {
  const run = spawnSync(
    process.execPath,
    ["bin/roomgate", "shell", "-c", config, "-n", "h", "--room", room, "--user", user],
    {
      input,
      env: { ...process.env, ...env },
      encoding: "utf8",
      timeout: 60_000,
    },
  );
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
}

describe("roles, approvals, pairing and the audit trail in a terminal room bound in shell.rooms", () => {
  it("holds alice's destructive call for an approver; bob, from his own terminal, approves it", () => {
    const alice = shellAs("alice", "/tools\n/call h.wipe target=staging\ny\n");
    expect(alice).toContain("One of this room's approvers must approve it");
    expect(alice).toContain("Only this room's approvers may approve this call.");
    expect(team.calls().filter((c) => c.startsWith("h.wipe"))).toEqual([]);
    const bob = shellAs("bob", "y\n");
    expect(bob).toContain("WIPED staging as shell:alice");
  }, 90_000);

  it("two-person approval: one approver is not enough, nor the same one twice; the second runs it", () => {
    const wipes = () => team.calls().filter((c) => c.includes("target-two"));
    expect(shellAs("alice", "/tools\n/call h.wipe target=target-two\n", "change")).toContain(
      "2 of this room's approvers must approve it",
    );
    const bob = shellAs("bob", "y\ny\n", "change");
    expect(bob).toContain("Approved by shell:bob (1 of 2)");
    expect(bob).toContain("You approved this already (1 of 2)");
    expect(wipes()).toEqual([]);
    expect(shellAs("dave", "y\n", "change")).toContain("WIPED target-two as shell:alice");
    expect(wipes()).toHaveLength(1);
  }, 90_000);

  it("refuses someone not on the list until they pair with a code from `roomgate pair`", () => {
    expect(shellAs("carol", "hello\n")).toContain("Sorry, you are not allowed to use this bot here.");
    const made = operatorCommand(["pair", "-c", config, "--binding", "shell-ops"], env);
    const code = /\b([0-9A-Z]{4}(?:-[0-9A-Z]{4}){3})\b/.exec(made.stdout)![1]!;
    const carol = shellAs("carol", `/pair ${code}\nhello\n`);
    expect(carol).toContain("Paired: you can now use this bot here.");
    expect(carol).toContain("pong: hello");
    expect(shellAs("carol", "again\n")).toContain("pong: again");
  }, 90_000);

  it("#12 exports the trail: the request by alice, bob's approval, the call made, carol's pairing", () => {
    const entries = exportedTrail(config, env);
    expect(entries.map((e) => `${String(e.type)} ${String(e.by ?? e.user)}`)).toEqual(
      expect.arrayContaining([
        "approval.requested shell:alice",
        "approval.granted shell:bob",
        "call.destructive shell:bob",
        "pairing.added shell:carol",
      ]),
    );
    expect(entries.find((e) => e.type === "call.destructive")).toMatchObject({
      binding: "shell-ops",
      requester: "shell:alice",
      approvedBy: ["shell:bob"],
      tool: "h.wipe",
      arguments: { target: "staging", user: "shell:alice" },
    });
  });
});
