import { appendFileSync, existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { AnswerSchema } from "../core/answer.js";
import type { Answer } from "../core/answer.js";
import { feedTools } from "./feed.js";
import { registerMesh } from "./mesh.js";
import { kgTools } from "./kg.js";
import { runsTools } from "./runs.js";
import { symTools } from "./sym.js";
import type { AnswerTool, DemoTool } from "./tool.js";

/** The namespaces the demo server can serve, in registration order. */
export const DEMO_NAMESPACES = ["feed", "runs", "kg", "sym"] as const;

/** One demo namespace name. */
export type DemoNamespace = (typeof DEMO_NAMESPACES)[number];

const TOOLS: Readonly<Record<DemoNamespace, readonly DemoTool[]>> = {
  feed: feedTools,
  runs: runsTools,
  kg: kgTools,
  sym: symTools,
};

/** What each demo namespace is for, as its server tells clients (serverInfo.description and instructions). */
export const DEMO_DESCRIPTIONS: Readonly<Record<DemoNamespace, string>> = {
  feed: "your reading feed: what to read today, digests, and search over saved items.",
  runs: "experiment runs: results, sweep comparisons with their caveats, and a claims checker for drafts.",
  kg: "a small concept graph: the concepts it knows and the path between two of them.",
  sym: "symbolic expressions: simplify an expression or verify an equation.",
};

/** A string no renderer may ever show: it rides in the malformed `feed.ask` result. */
export const MALFORMED_SENTINEL = "MALFORMED-REPLY-MUST-NOT-BE-SHOWN";

/** The `structuredContent` `feed.ask` sends in malformed mode: `ok` is not a boolean and `items` is not a list. */
export const MALFORMED_RESULT = { ok: "yes", answer: MALFORMED_SENTINEL, items: "none" } as const;

/** How the demo server behaves; `demoOptionsFromEnv` reads these from the environment. */
export interface DemoServerOptions {
  /** Register only these namespaces (ATTEST_TOOLS); the rest are absent from tools/list. Default: all. */
  readonly namespaces?: readonly DemoNamespace[];
  /** Also serve `mesh`, the namespace found by address (ATTEST_TOOLS naming mesh). */
  readonly mesh?: boolean;
  /** Make `feed.ask` return a result that is not an Answer (DEMO_MALFORMED=1). */
  readonly malformed?: boolean;
  /** Delay every `*.ask` answer by this many milliseconds (DEMO_SLOW_MS). */
  readonly slowMs?: number;
  /** Append `<tool>\t<json args>` for every tools/call request received (DEMO_CALL_LOG). */
  readonly callLog?: string;
  /**
   * While this file exists, every `*.ask` waits before answering (DEMO_HOLD_FILE): a test
   * holds a call open until it has changed what the call must find afterwards.
   */
  readonly holdFile?: string;
}

/** Every demo tool only reads its fixtures, so none needs an approval before it runs. */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

function isNamespace(name: string): name is DemoNamespace {
  return (DEMO_NAMESPACES as readonly string[]).includes(name);
}

/**
 * Reads ATTEST_TOOLS, DEMO_MALFORMED, DEMO_SLOW_MS, DEMO_CALL_LOG and DEMO_HOLD_FILE; a value that
 * cannot be honoured throws, because a server that silently ignored a restriction
 * would serve tools it was told to hide.
 */
export function demoOptionsFromEnv(env: NodeJS.ProcessEnv): DemoServerOptions {
  const names = (env.ATTEST_TOOLS ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  const unknown = names.filter((name) => !isNamespace(name) && name !== "mesh");
  if (unknown.length > 0) {
    throw new Error(
      `ATTEST_TOOLS names unknown namespaces: ${unknown.join(", ")} (known: ${DEMO_NAMESPACES.join(", ")})`,
    );
  }
  const slowMs = Number(env.DEMO_SLOW_MS ?? 0);
  if (!Number.isFinite(slowMs) || slowMs < 0)
    throw new Error(`DEMO_SLOW_MS must be a number of milliseconds`);
  return {
    // An empty ATTEST_TOOLS counts as unset: all namespaces, as with no variable at all.
    ...(names.length > 0 ? { namespaces: names.filter(isNamespace) } : {}),
    // mesh (found by address) is served only when asked for by name.
    ...(names.includes("mesh") ? { mesh: true } : {}),
    malformed: env.DEMO_MALFORMED === "1",
    slowMs,
    ...(env.DEMO_CALL_LOG ? { callLog: env.DEMO_CALL_LOG } : {}),
    ...(env.DEMO_HOLD_FILE ? { holdFile: env.DEMO_HOLD_FILE } : {}),
  };
}

function answerResult(answer: Answer): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(answer) }], structuredContent: answer };
}

function registerAnswerTool(server: McpServer, tool: AnswerTool, options: DemoServerOptions): void {
  const isAsk = tool.name.endsWith(".ask");
  const info = {
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input,
    annotations: READ_ONLY,
  };
  const pause = async (): Promise<void> => {
    if (!isAsk) return;
    while (options.holdFile && existsSync(options.holdFile)) await sleep(20);
    if (options.slowMs) await sleep(options.slowMs);
  };
  if (options.malformed && tool.name === "feed.ask") {
    // The SDK server checks structuredContent against a declared outputSchema and would turn
    // this into an error result, so the misbehaving tool declares none: the broken reply
    // then reaches the client exactly as a buggy namespace server would send it.
    server.registerTool(tool.name, info, async () => {
      await pause();
      return {
        content: [{ type: "text", text: JSON.stringify(MALFORMED_RESULT) }],
        structuredContent: MALFORMED_RESULT,
      };
    });
    return;
  }
  server.registerTool(tool.name, { ...info, outputSchema: AnswerSchema }, async (args) => {
    await pause();
    return answerResult(tool.run(args));
  });
}

/** Builds the demo MCP server with the chosen namespaces' tools registered; it does no I/O until connected. */
export function createDemoServer(options: DemoServerOptions = {}): McpServer {
  const served = options.namespaces ?? DEMO_NAMESPACES;
  const described = served.map((ns) => `${ns}: ${DEMO_DESCRIPTIONS[ns]}`);
  const server = new McpServer(
    {
      name: "roomgate-demo",
      title: "roomgate demo namespaces",
      version: "0.1.0",
      description:
        served.length === 1 ? DEMO_DESCRIPTIONS[served[0]!] : `Demo namespaces — ${described.join(" ")}`,
    },
    { instructions: `Each namespace's <ns>.ask routes a question to its tools.\n\n${described.join("\n")}` },
  );
  if (options.mesh) registerMesh(server);
  for (const namespace of served) {
    for (const tool of TOOLS[namespace]) {
      if (tool.kind === "answer") registerAnswerTool(server, tool, options);
      else {
        server.registerTool(
          tool.name,
          {
            title: tool.title,
            description: tool.description,
            inputSchema: tool.input,
            annotations: READ_ONLY,
          },
          (args) => ({
            content: [{ type: "text", text: tool.run(args) }],
          }),
        );
      }
    }
  }
  return server;
}

/** A transport `onmessage` hook that logs each tools/call request before the server handles it. */
function callLogger(path: string): (message: JSONRPCMessage) => void {
  return (message) => {
    if (!isJSONRPCRequest(message) || message.method !== "tools/call") return;
    const { name, arguments: args } = message.params ?? {};
    appendFileSync(path, `${String(name)}\t${JSON.stringify(args ?? {})}\n`);
  };
}

/** Runs the demo server on stdin/stdout with options from the environment. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const options = demoOptionsFromEnv(env);
  const transport = new StdioServerTransport();
  // Logged at the transport, not in the handlers, so calls the SDK rejects (unknown tool,
  // bad arguments) are counted too: they reached the server all the same. The SDK's
  // Protocol.connect keeps an onmessage already set and calls it first.
  if (options.callLog !== undefined) transport.onmessage = callLogger(options.callLog);
  await createDemoServer(options).connect(transport);
}
