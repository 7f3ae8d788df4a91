import { afterAll, describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { NamespaceError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import { startMcpHttpServer, type McpHttpServer } from "../support/mcp-http-server.js";
import { DEMO_SERVER } from "../support/spine.js";
import { eventually } from "../support/wait.js";

const clients: NamespaceClient[] = [];
function client(name: string, raw: Record<string, unknown>): NamespaceClient {
  const c = new NamespaceClient(name, NamespaceConfigSchema.parse(raw), silentLogger());
  clients.push(c);
  return c;
}

describe("NamespaceClient", () => {
  let http: McpHttpServer | undefined;
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await http?.close();
  });

  it("lists only its own namespace's tools from a whole server over stdio", async () => {
    const kg = client("kg", { command: [process.execPath, DEMO_SERVER] });
    const names = (await kg.tools()).map((t) => t.name);
    expect(names).toContain("kg.ask");
    expect(names.every((n) => n.startsWith("kg."))).toBe(true);
  });

  it("sees the server restricted at registration: ATTEST_TOOLS=feed has no runs.* at all", async () => {
    const unprefixed = client("all", {
      command: [process.execPath, DEMO_SERVER],
      env: { ATTEST_TOOLS: "feed" },
      prefix: "",
    });
    const names = (await unprefixed.tools()).map((t) => t.name);
    expect(names.length).toBeGreaterThan(3);
    expect(names.filter((n) => !n.startsWith("feed."))).toEqual([]);
  });

  it("runs the bundled server through the CLI's demo-server command", async () => {
    const sym = client("sym", {
      command: [process.execPath, "bin/roomgate", "demo-server"],
      env: { ATTEST_TOOLS: "sym" },
    });
    expect(await sym.has("sym.verify")).toBe(true);
  });

  it("calls over Streamable HTTP with the configured headers", async () => {
    http = await startMcpHttpServer({ namespaces: ["runs"] });
    const runs = client("runs", { url: http.url, headers: { Authorization: "Bearer test-token" } });
    const result = await runs.call("runs.ask", { question: "which arm of my sweep won?" });
    const answer = AnswerSchema.parse(result.structuredContent);
    expect(answer.ok).toBe(true);
    expect(http.requests.every((h) => h.authorization === "Bearer test-token")).toBe(true);
  });

  it("times out a slow call with a line the person can read", async () => {
    const slow = client("feed", {
      command: [process.execPath, DEMO_SERVER],
      env: { ATTEST_TOOLS: "feed", DEMO_SLOW_MS: "2000" },
      timeoutSeconds: 0.2,
    });
    const err = await slow
      .call("feed.ask", { question: "what should I read today?" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NamespaceError);
    expect((err as NamespaceError).userText).toMatch(
      /^feed did not answer in time \(feed\.ask timed out after 200 ms\); please try again \(ref [0-9a-f]{8}\)\.$/,
    );
  });

  it("cancels a call when its signal aborts", async () => {
    const slow = client("feed", {
      command: [process.execPath, DEMO_SERVER],
      env: { ATTEST_TOOLS: "feed", DEMO_SLOW_MS: "2000" },
    });
    await slow.start();
    const controller = new AbortController();
    const pending = slow.call(
      "feed.ask",
      { question: "what should I read today?" },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expect(pending).rejects.toBeInstanceOf(NamespaceError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("gives a clear error when the server cannot start", async () => {
    const broken = client("broken", { command: ["/nonexistent/mcp-server"] });
    const err = await broken.tools().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NamespaceError);
    expect((err as NamespaceError).userText).toMatch(
      /^broken is not reachable \(its command was not found\); the operator has the details \(ref [0-9a-f]{8}\)\.$/,
    );
  });
});

describe("NamespaceClient and a changing server", () => {
  it("refreshes its tool list on notifications/tools/list_changed", async () => {
    const grow = client("grow", {
      command: [process.execPath, "--import", "tsx", "test/support/growing-server.ts"],
    });
    expect((await grow.tools()).map((t) => t.name)).toEqual(["grow.add"]);
    await grow.call("grow.add", {});
    await eventually(async () =>
      expect((await grow.tools()).map((t) => t.name)).toEqual(["grow.add", "grow.extra"]),
    );
    await grow.close();
  });
});
