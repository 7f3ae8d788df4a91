import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { EngineHarness } from "../support/engine-harness.js";
import { startToolServer, type ToolServer } from "../support/tool-server.js";

const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
const APPROVAL_SECONDS = 600;
const object = { type: "object" as const, properties: { path: { type: "string" } }, required: ["path"] };

describe("approvals for tools MCP marks destructive", () => {
  let server: ToolServer;
  let engine: EngineHarness;
  beforeAll(async () => {
    server = await startToolServer([
      // No annotations: the spec's defaults make it destructive.
      { tool: { name: "write_file", title: "Write File", inputSchema: object }, run: () => text("written") },
      {
        tool: { name: "move_file", inputSchema: object, annotations: { destructiveHint: true } },
        run: () => text("moved"),
      },
      {
        tool: { name: "touch_file", inputSchema: object, annotations: { destructiveHint: true } },
        run: () => text("touched"),
      },
      {
        tool: { name: "read_secret", inputSchema: object, annotations: { readOnlyHint: true } },
        run: () => text("s3cret"),
      },
      {
        tool: { name: "read_file", inputSchema: object, annotations: { readOnlyHint: true } },
        run: () => text("hello"),
      },
      {
        tool: {
          name: "ask",
          inputSchema: { type: "object", properties: { question: { type: "string" } } },
          outputSchema: { type: "object" },
        },
        run: () => {
          const answer = { ok: true, answer: "routed", items: [], caveat: null, options: [] };
          return { ...text(JSON.stringify(answer)), structuredContent: answer };
        },
      },
    ]);
    engine = new EngineHarness(
      {
        namespaces: {
          files: { url: server.url, prefix: "", tools: { trust: ["touch_*"], confirm: ["read_secret"] } },
        },
        sessions: { approvalSeconds: APPROVAL_SECONDS },
      },
      "files",
    );
  });
  afterAll(async () => {
    await engine.close();
    await server.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const callsOf = (name: string) => server.calls.filter((c) => c.name === name);

  it("holds a destructive call, showing the tool and its arguments, and runs it once on Approve", async () => {
    await engine.ask("approve", "/tools");
    const held = await engine.ask("approve", "/call write_file path=/tmp/x.txt");
    expect(held.text).toContain(
      "files wants to run Write File (write_file), which MCP marks as possibly destructive",
    );
    expect(held.text).toContain('"path": "/tmp/x.txt"');
    expect(held.outcome.reply!.options.map((o) => o.label)).toEqual(["Approve", "Deny"]);
    expect(callsOf("write_file")).toHaveLength(0);
    const done = await engine.ask("approve", "1");
    expect(done.text).toContain("written");
    expect(callsOf("write_file")).toEqual([{ name: "write_file", args: { path: "/tmp/x.txt" } }]);
    // Single use: the same answer again runs nothing.
    await engine.ask("approve", "1");
    expect(callsOf("write_file")).toHaveLength(1);
  });

  it("does not run a denied call; y/n answer an approval as typed text", async () => {
    await engine.ask("deny", "/tools");
    await engine.ask("deny", "/call move_file path=a");
    const denied = await engine.ask("deny", "n");
    expect(denied.text).toBe("Denied: move_file was not run.");
    expect(callsOf("move_file")).toHaveLength(0);
    await engine.ask("deny", "/call move_file path=b");
    const yes = await engine.ask("deny", "y");
    expect(yes.text).toContain("moved");
    expect(callsOf("move_file")).toEqual([{ name: "move_file", args: { path: "b" } }]);
  });

  it("runs read-only and trusted tools, and the router, without asking", async () => {
    await engine.ask("trust", "/tools");
    expect((await engine.ask("trust", "/call read_file path=a")).text).toContain("hello");
    expect((await engine.ask("trust", "/call touch_file path=a")).text).toContain("touched");
    expect((await engine.ask("trust", "what is up?")).text).toContain("routed");
  });

  it("an approval is bound to its room: another room cannot use its button", async () => {
    await engine.ask("owner", "/tools");
    const held = await engine.ask("owner", "/call write_file path=/owner");
    const token = held.outcome.reply!.options[0]!.token;
    const before = callsOf("write_file").length;
    const forged = await engine.choose("intruder", token);
    expect(forged.outcome.toast).toContain("not known here");
    expect(callsOf("write_file")).toHaveLength(before);
  });

  it("asks to confirm a tool the binding lists under tools.confirm, even when it is read-only", async () => {
    await engine.ask("confirm", "/tools");
    const held = await engine.ask("confirm", "/call read_secret path=k");
    expect(held.text).toContain(
      "files wants to run read_secret, which this room's configuration asks to confirm",
    );
    expect(callsOf("read_secret")).toHaveLength(0);
    expect((await engine.ask("confirm", "y")).text).toContain("s3cret");
  });

  it("an approval nobody decided expires: a late Approve runs nothing and says so", async () => {
    await engine.ask("late", "/tools");
    const held = await engine.ask("late", "/call write_file path=/late");
    const before = callsOf("write_file").length;
    // The clock moves past the approval's expiry instead of the test waiting it out.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + (APPROVAL_SECONDS + 1) * 1000 });
    const late = await engine.choose("late", held.outcome.reply!.options[0]!.token);
    expect(late.text).toContain("expired");
    expect(callsOf("write_file")).toHaveLength(before);
  });

  it("an approval answered in time runs its call", async () => {
    await engine.ask("in-time", "/tools");
    const held = await engine.ask("in-time", "/call write_file path=/in-time");
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + (APPROVAL_SECONDS - 5) * 1000 });
    expect((await engine.choose("in-time", held.outcome.reply!.options[0]!.token)).text).toContain("written");
    expect(callsOf("write_file").at(-1)).toEqual({ name: "write_file", args: { path: "/in-time" } });
  });
});
