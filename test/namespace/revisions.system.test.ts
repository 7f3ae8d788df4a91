import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { NamespaceError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import type { CallProgress } from "../../src/namespace/call-options.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import type { TaskLedger, TaskRecord } from "../../src/namespace/task-call.js";
import { eventually } from "../support/wait.js";
import { BOARD_URI } from "../support/mcp-2026/events.js";
import {
  mcp26Server,
  startMcp26Http,
  type Mcp26Http,
  type Mcp26Server,
} from "../support/mcp-2026/harness.js";

// One MCP server on the SDK v2 (test/support/mcp-2026), a real child process, reached by
// roomgate's namespace client on each revision: as a 2026-07-28 server (it also serves
// 2025-11-25 clients, so roomgate picks the newest) and as a 2025-11-25 server only. The
// room sees the same questions, progress, results and updates either way.

/** The in-memory twin of the Redis task ledger. */
class MemoryTaskLedger implements TaskLedger {
  readonly records = new Map<string, TaskRecord>();
  async get(room: string, key: string) {
    return this.records.get(`${room}|${key}`);
  }
  async set(room: string, key: string, record: TaskRecord) {
    this.records.set(`${room}|${key}`, record);
  }
}

/** A person answering each question with the next of `answers`, in order; what was asked is kept. */
function person(...answers: ElicitResult[]) {
  const asked: ElicitRequest["params"][] = [];
  return {
    asked,
    onElicit: async (params: ElicitRequest["params"]) => {
      asked.push(params);
      return answers.shift() ?? { action: "cancel" as const };
    },
  };
}

const BUILD_STAGES = ["compiling", "linking", "packaging"];

const textOf = (result: { content?: unknown[] }) =>
  (result.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("");

const cases = [
  { speaks: "both" as const, over: "stdio", revision: "2026-07-28" },
  { speaks: "both" as const, over: "http", revision: "2026-07-28" },
  { speaks: "2025-11-25" as const, over: "stdio", revision: "2025-11-25" },
];

describe.each(cases)(
  "a v2 server speaking $speaks over $over, reached on $revision",
  ({ speaks, over, revision }) => {
    const modern = revision === "2026-07-28";
    let server: Mcp26Server;
    let http: Mcp26Http | undefined;
    let ns: NamespaceClient;
    const ledger = new MemoryTaskLedger();
    const updates: string[] = [];

    beforeAll(async () => {
      if (over === "http") http = await startMcp26Http(speaks, 150);
      server = http ?? mcp26Server(speaks, 150);
      const where = http ? { url: http.url } : server.namespace;
      ns = new NamespaceClient(
        "mt",
        NamespaceConfigSchema.parse({ ...where, timeoutSeconds: 20 }),
        silentLogger(),
      );
      ns.tasks = ledger;
      ns.subscriptions.watch([BOARD_URI], (uri) => updates.push(uri));
      await ns.start();
    });
    afterAll(async () => {
      await ns.close();
      await http?.stop();
    });

    it("negotiates the newest revision both sides speak", async () => {
      expect((await ns.about()).revision).toBe(revision);
      expect(ns.revision).toBe(revision);
    });

    it("asks the router's question through the call and answers it; the Answer comes back as written", async () => {
      const alice = person({ action: "accept", content: { target: "production" } });
      const result = await ns.call("mt.ask", { question: "deploy please" }, { onElicit: alice.onElicit });
      expect(alice.asked).toHaveLength(1);
      expect(alice.asked[0]).toMatchObject({ message: "Deploy where?" });
      const schema = (alice.asked[0] as { requestedSchema: { properties: Record<string, unknown> } })
        .requestedSchema;
      expect(schema.properties.target).toMatchObject({ enum: ["staging", "production"], title: "Target" });
      expect(AnswerSchema.parse(result.structuredContent)).toMatchObject({
        ok: true,
        answer: 'Deployed to production <now> & "live".',
        caveat: "Rollback stays open for *one* hour.",
      });
      // The server ran the tool twice: first asking, then with the answer.
      const calls = server
        .events("call")
        .filter((e) => e.tool === "mt.ask" && e.question === "deploy please");
      expect(calls.map((e) => e.responses)).toEqual([[], ["target"]]);
      expect(calls.every((e) => e.era === (modern ? "modern" : "legacy"))).toBe(true);
    });

    it("a declined question reaches the server as declined", async () => {
      const bob = person({ action: "decline" });
      const result = await ns.call("mt.ask", { question: "deploy now" }, { onElicit: bob.onElicit });
      expect(AnswerSchema.parse(result.structuredContent).answer).toBe(
        "Not deployed: the question was declined.",
      );
    });

    it("asks two rounds in order, the server's state carried between them", async () => {
      const alice = person(
        { action: "accept", content: { channel: "stable", notes: "first cut" } },
        { action: "accept", content: { confirm: true } },
      );
      const result = await ns.call("mt.release", { version: "1.2.3" }, { onElicit: alice.onElicit });
      expect(alice.asked.map((a) => a.message)).toEqual([
        "Release 1.2.3: which channel?",
        "Release 1.2.3 to stable?",
      ]);
      expect(textOf(result)).toBe("Released 1.2.3 to stable (first cut).");
    });

    it("two calls asking at once: each question reaches its own call on 2026-07-28; 2025-11-25 cannot tell them apart", async () => {
      const alice = person({ action: "accept", content: { target: "staging" } });
      const bob = person({ action: "accept", content: { target: "production" } });
      const [a, b] = await Promise.all([
        ns.call("mt.ask", { question: "deploy A" }, { onElicit: alice.onElicit }),
        ns.call("mt.ask", { question: "deploy B" }, { onElicit: bob.onElicit }),
      ]);
      const answers = [a, b].map((r) => AnswerSchema.parse(r.structuredContent).answer);
      if (modern) {
        expect(answers).toEqual([
          'Deployed to staging <now> & "live".',
          'Deployed to production <now> & "live".',
        ]);
        expect([alice.asked.length, bob.asked.length]).toEqual([1, 1]);
      } else {
        // A pushed question names no call: with two in flight it is declined, not guessed.
        expect(answers).toEqual([
          "Not deployed: the question was declined.",
          "Not deployed: the question was declined.",
        ]);
        expect([alice.asked.length, bob.asked.length]).toEqual([0, 0]);
      }
    });

    it("shows a build's stages as progress and returns its result (a task on 2026-07-28)", async () => {
      const progress: CallProgress[] = [];
      const result = await ns.call(
        "mt.build",
        {},
        { onProgress: (p) => progress.push(p), task: { room: "r1", key: "build-1" } },
      );
      expect(textOf(result)).toBe("build of main ready: 42 files");
      const lines = progress.map((p) => p.message ?? "");
      if (modern) {
        const [created] = server.events("task-created");
        expect(created).toMatchObject({ tool: "mt.build" });
        expect(lines[0]).toBe(`started (task ${created!.taskId as string})`);
        expect(lines).toEqual(expect.arrayContaining(["working — linking (2/3)", "completed — done"]));
        expect(server.events("tasks/get").length).toBeGreaterThan(1);
        expect(ledger.records.get("r1|build-1")).toMatchObject({ taskId: created!.taskId, tool: "mt.build" });
      } else {
        // Progress is handed on at most twice a second (the latest wins): the stages shown are in order.
        expect(lines.at(-1)).toBe("packaging");
        expect(lines).toEqual(BUILD_STAGES.filter((stage) => lines.includes(stage)));
        expect(progress.every((p) => p.total === 3)).toBe(true);
        expect(server.events("task-created")).toEqual([]);
      }
    });

    it.runIf(modern)(
      "follows a task this call started before a restart instead of calling again",
      async () => {
        const created = server.events("task-created").length;
        const result = await ns.call("mt.build", {}, { task: { room: "r1", key: "build-1" } });
        expect(textOf(result)).toBe("build of main ready: 42 files");
        expect(server.events("task-created")).toHaveLength(created);
      },
    );

    it.runIf(modern)("asks a task's question in the room and answers it with tasks/update", async () => {
      const alice = person({ action: "accept", content: { sign: true } });
      const progress: string[] = [];
      const result = await ns.call(
        "mt.ship",
        {},
        { onElicit: alice.onElicit, onProgress: (p) => progress.push(p.message ?? "") },
      );
      expect(alice.asked.map((a) => a.message)).toEqual(["Sign the release?"]);
      expect(textOf(result)).toBe("shipped, signed");
      expect(progress).toContain("input_required — waiting for an answer");
      expect(server.events("tasks/update")).toEqual([
        expect.objectContaining({
          keys: ["sign"],
          responses: { sign: { action: "accept", content: { sign: true } } },
        }),
      ]);
    });

    it.runIf(modern)("cancels the task at the server when the call is cancelled", async () => {
      const controller = new AbortController();
      const progress: string[] = [];
      const call = ns.call(
        "mt.build",
        { target: "slow" },
        {
          signal: controller.signal,
          onProgress: (p) => {
            progress.push(p.message ?? "");
            if (p.message?.startsWith("working")) controller.abort();
          },
        },
      );
      await expect(call).rejects.toBeInstanceOf(Error);
      await eventually(() => expect(server.events("tasks/cancel")).toHaveLength(1));
      const [cancel] = server.events("tasks/cancel");
      await eventually(() =>
        expect(
          server
            .events("task-status")
            .filter((e) => e.taskId === cancel!.taskId)
            .at(-1),
        ).toMatchObject({
          status: "cancelled",
        }),
      );
    });

    it("hands on an update of a subscribed resource (subscriptions/listen on 2026-07-28)", async () => {
      server.setNote(`green ${revision}`);
      await eventually(() => expect(updates).toContain(BOARD_URI), 10_000);
      const read = await ns.readResource(BOARD_URI);
      expect(read.content).toEqual([
        { type: "resource", resource: { uri: BOARD_URI, mimeType: "text/plain", text: `green ${revision}` } },
      ]);
      // resources/subscribe is the 2025-11-25 way; 2026-07-28 asks on the listen stream.
      expect(server.events("subscribe").length > 0).toBe(!modern);
    });

    it("a tool that is not the namespace's is refused before the server", async () => {
      await expect(ns.call("other.tool", {})).rejects.toBeInstanceOf(NamespaceError);
    });
  },
);

describe("a stdio server that exits on the revision probe", () => {
  it("is started again as a 2025-11-25 server, and only once more", async () => {
    const pids = join(mkdtempSync(join(tmpdir(), "roomgate-strict-")), "pids");
    const ns = new NamespaceClient(
      "strict",
      NamespaceConfigSchema.parse({
        command: [process.execPath, "--import", "tsx", "test/support/strict-start-server.ts"],
        env: { STRICT_PID_LOG: pids },
      }),
      silentLogger(),
    );
    try {
      const result = await ns.call("strict.hello", {});
      expect(textOf(result)).toBe("hello from a strict server");
      expect(ns.revision).toBe("2025-11-25");
      const started = readFileSync(pids, "utf8").split("\n").filter(Boolean);
      expect(started).toHaveLength(2);
    } finally {
      await ns.close();
    }
  });
});
