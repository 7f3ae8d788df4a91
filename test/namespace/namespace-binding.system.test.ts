import { createServer } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { NamespaceError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import { isDestructive } from "../../src/namespace/tool-info.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { DEMO_SERVER } from "../support/spine.js";

const clients: NamespaceClient[] = [];
function client(name: string, raw: Record<string, unknown>): NamespaceClient {
  const c = new NamespaceClient(name, NamespaceConfigSchema.parse(raw), silentLogger());
  clients.push(c);
  return c;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

describe("a namespace binding: prefix, router name, allow/deny/trust", () => {
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });

  it('says when a third-party server lists no tool under the default prefix, naming prefix: ""', async () => {
    const everything = client("everything", { command: EVERYTHING_COMMAND });
    expect(await everything.tools()).toEqual([]);
    expect(everything.prefixHint()).toContain('none named with the prefix "everything."');
    expect(everything.prefixHint()).toContain('`prefix: ""` under namespaces.everything');
  });

  it('with prefix "" the whole server is the namespace; its router defaults to "ask"', async () => {
    const everything = client("everything", { command: EVERYTHING_COMMAND, prefix: "" });
    const names = (await everything.tools()).map((t) => t.name);
    expect(names).toContain("echo");
    expect(names).toContain("get-tiny-image");
    expect(everything.prefixHint()).toBeUndefined();
    expect(everything.askTool).toBe("ask");
  });

  it("names its router with ask:, or none with ask: false", () => {
    expect(client("feed", { command: ["x"], ask: "feed.search" }).askTool).toBe("feed.search");
    expect(client("feed", { command: ["x"], ask: false }).askTool).toBeNull();
    expect(client("feed", { command: ["x"] }).askTool).toBe("feed.ask");
  });

  it("a denied tool does not exist: not listed, and calling it is refused before the server", async () => {
    const everything = client("everything", {
      command: EVERYTHING_COMMAND,
      prefix: "",
      tools: { deny: ["get-env", "toggle-*"] },
    });
    const names = (await everything.tools()).map((t) => t.name);
    expect(names).not.toContain("get-env");
    expect(names.filter((n) => n.startsWith("toggle-"))).toEqual([]);
    expect(names).toContain("echo");
    const err = await everything.call("get-env", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NamespaceError);
    expect((err as NamespaceError).userText).toBe(
      "get-env is not a tool of this room's agent (everything). Nothing was called.",
    );
  });

  it("tools.allow keeps only the matching tools; tools.trust is read per tool", async () => {
    const everything = client("everything", {
      command: EVERYTHING_COMMAND,
      prefix: "",
      tools: { allow: ["get-*"], deny: ["get-env"], trust: ["get-s?m"] },
    });
    const names = (await everything.tools()).map((t) => t.name);
    expect(names.length).toBeGreaterThan(3);
    expect(names.every((n) => n.startsWith("get-") && n !== "get-env")).toBe(true);
    expect(everything.isTrusted("get-sum")).toBe(true);
    expect(everything.isTrusted("get-tiny-image")).toBe(false);
  });

  it("reads MCP annotations: a tool without readOnlyHint counts as destructive unless it says otherwise", async () => {
    const everything = client("everything", { command: EVERYTHING_COMMAND, prefix: "" });
    const tools = await everything.tools();
    expect(isDestructive(tools.find((t) => t.name === "echo")!)).toBe(false);
    expect(isDestructive({ name: "x", inputSchema: {} })).toBe(true);
    expect(isDestructive({ name: "x", inputSchema: {}, annotations: { destructiveHint: false } })).toBe(
      false,
    );
    expect(isDestructive({ name: "x", inputSchema: {}, annotations: { readOnlyHint: true } })).toBe(false);
  });

  it.each([
    ["a command that does not exist", { command: ["/nonexistent/mcp-server"] }, "its command was not found"],
    [
      "a server that exits at start",
      { command: [process.execPath, "-e", "process.exit(3)"] },
      "it exited at start",
    ],
    [
      "a server that never answers",
      { command: [process.execPath, "-e", "setTimeout(() => {}, 20000)"], startTimeoutSeconds: 0.5 },
      "it did not answer at start",
    ],
  ])("names the cause class of %s, without internals", async (_what, raw, reason) => {
    const broken = client("feed", raw);
    const err = await broken.tools().catch((e: unknown) => e);
    expect((err as NamespaceError).userText).toMatch(
      new RegExp(
        `^feed is not reachable \\(${reason}\\); the operator has the details \\(ref [0-9a-f]{8}\\)\\.$`,
      ),
    );
  });

  it("names a refused connection over HTTP", async () => {
    const port = await closedPort();
    const broken = client("runs", { url: `http://127.0.0.1:${port}/mcp` });
    const err = await broken.tools().catch((e: unknown) => e);
    expect((err as NamespaceError).userText).toContain("runs is not reachable (the connection was refused)");
  });

  it("the demo tools declare themselves read-only", async () => {
    const feed = client("feed", { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } });
    expect((await feed.tools()).filter(isDestructive)).toEqual([]);
  });
});
