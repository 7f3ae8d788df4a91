import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { MARKUP_ANSWER } from "../../src/demo/fixtures.js";
import { createDemoServer, demoOptionsFromEnv, MALFORMED_SENTINEL } from "../../src/demo/server.js";
import type { DemoServerOptions } from "../../src/demo/server.js";

const ROOT = join(import.meta.dirname, "..", "..");
const clients: Client[] = [];

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

/** Connects a client to a demo server running in this process. */
async function inProcess(options: DemoServerOptions = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createDemoServer(options).connect(serverSide);
  const client = new Client({ name: "demo-test", version: "0" });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

/** Spawns the real server (`src/demo/main.ts` under tsx) and connects over stdio. */
async function spawned(env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/demo/main.ts"],
    cwd: ROOT,
    env: { ...getDefaultEnvironment(), ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "demo-test", version: "0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

describe("demoOptionsFromEnv", () => {
  it("reads the namespace restriction, modes and call log", () => {
    expect(demoOptionsFromEnv({})).toEqual({ malformed: false, slowMs: 0 });
    expect(
      demoOptionsFromEnv({ ATTEST_TOOLS: " feed, KG ", DEMO_MALFORMED: "1", DEMO_SLOW_MS: "50" }),
    ).toEqual({
      namespaces: ["feed", "kg"],
      malformed: true,
      slowMs: 50,
    });
    expect(demoOptionsFromEnv({ ATTEST_TOOLS: "", DEMO_CALL_LOG: "/tmp/x" })).toMatchObject({
      callLog: "/tmp/x",
    });
    expect(demoOptionsFromEnv({ ATTEST_TOOLS: "" })).not.toHaveProperty("namespaces");
  });

  it("refuses a restriction it cannot honour", () => {
    expect(() => demoOptionsFromEnv({ ATTEST_TOOLS: "feed,provenance" })).toThrow(/provenance/);
    expect(() => demoOptionsFromEnv({ DEMO_SLOW_MS: "soon" })).toThrow(/DEMO_SLOW_MS/);
  });
});

describe("demo server in process", () => {
  it("declares outputSchema, title and input descriptions, and returns Answers for every tool", async () => {
    const client = await inProcess();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name.split(".")[0])).toEqual(
      expect.arrayContaining(["feed", "runs", "kg", "sym"]),
    );
    for (const tool of tools) {
      expect(tool.title, tool.name).toBeTruthy();
      if (tool.name === "feed.raw") {
        expect(tool.outputSchema).toBeUndefined();
        continue;
      }
      expect(tool.outputSchema, tool.name).toMatchObject({
        type: "object",
        required: expect.arrayContaining(["ok"]),
      });
    }
    const compare = tools.find((tool) => tool.name === "runs.compare");
    expect(compare?.inputSchema.required).toEqual(["family"]);
    expect(compare?.inputSchema.properties?.family).toMatchObject({
      description: expect.stringMatching(/sweep/),
    });
    expect(tools.find((tool) => tool.name === "kg.path")?.inputSchema.required).toEqual(["from", "to"]);
    expect(tools.find((tool) => tool.name === "runs.claims_check")?.inputSchema.required).toEqual(["draft"]);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);

    const search = await client.callTool({ name: "feed.search", arguments: { query: "markup" } });
    expect(AnswerSchema.parse(search.structuredContent).answer).toBe(MARKUP_ANSWER);
    const unknown = await client.callTool({ name: "feed.item", arguments: { id: "nope" } });
    expect(AnswerSchema.parse(unknown.structuredContent).ok).toBe(false);
    expect(unknown.isError).toBeFalsy();
  });

  it("returns only text from feed.raw", async () => {
    const client = await inProcess({ namespaces: ["feed"] });
    const raw = await client.callTool({ name: "feed.raw", arguments: {} });
    expect(raw.structuredContent).toBeUndefined();
    expect(raw.content).toEqual([{ type: "text", text: expect.stringMatching(/^feed export/) }]);
  });

  it("delays *.ask by DEMO_SLOW_MS, and only *.ask", async () => {
    const client = await inProcess({ slowMs: 300 });
    let started = Date.now();
    await client.callTool({ name: "feed.ask", arguments: { question: "what should I read today?" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    started = Date.now();
    await client.callTool({ name: "feed.digest", arguments: {} });
    expect(Date.now() - started).toBeLessThan(290);
  });
});

describe("demo server over stdio", () => {
  it("serves the digest from feed.ask as a valid Answer", async () => {
    const client = await spawned();
    const { tools } = await client.listTools();
    for (const tool of tools)
      if (tool.name !== "feed.raw") expect(tool.outputSchema, tool.name).toBeDefined();
    const result = await client.callTool({
      name: "feed.ask",
      arguments: { question: "what should I read today?", user: "tg:1", session: "c1" },
    });
    const answer = AnswerSchema.parse(result.structuredContent);
    expect(answer.answer).toBe("Today's digest: 3 items worth reading");
    expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? "")).toEqual(answer);
  });

  it("registers only the feed namespace with ATTEST_TOOLS=feed, and logs every call that arrives", async () => {
    const dir = mkdtempSync(join(tmpdir(), "roomgate-demo-"));
    try {
      const log = join(dir, "calls.log");
      const client = await spawned({ ATTEST_TOOLS: "feed", DEMO_CALL_LOG: log });
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain("feed.ask");
      expect(names.filter((name) => !name.startsWith("feed."))).toEqual([]);
      const refused = await client.callTool({ name: "runs.compare", arguments: { family: "kdsweep" } });
      expect(refused.isError).toBe(true);
      await client.callTool({ name: "feed.digest", arguments: {} });
      expect(readFileSync(log, "utf8")).toBe('runs.compare\t{"family":"kdsweep"}\nfeed.digest\t{}\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("sends a result that is not an Answer from feed.ask with DEMO_MALFORMED=1", async () => {
    const client = await spawned({ DEMO_MALFORMED: "1" });
    await client.listTools();
    const result = await client.callTool({
      name: "feed.ask",
      arguments: { question: "what should I read today?" },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ ok: "yes", answer: MALFORMED_SENTINEL });
    expect(AnswerSchema.safeParse(result.structuredContent).success).toBe(false);
    // The other tools stay well-formed.
    const digest = await client.callTool({ name: "feed.digest", arguments: {} });
    expect(AnswerSchema.safeParse(digest.structuredContent).success).toBe(true);
  });
});
