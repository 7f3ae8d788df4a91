import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { serveStatelessMcp } from "../../src/demo/stateless-http.js";

/**
 * Which rule the server breaks: the Answer contract's (`answers`), MCP's own
 * (`schemas`), or the router fails every question with an MCP error (`errors`).
 */
export type Breakage = "answers" | "schemas" | "errors";

/**
 * A namespace server that breaks every rule of one level, for `roomgate check`:
 * `answers` has a router without outputSchema whose answers are invalid, never
 * ok:false, different each time, and it lists another namespace's tool;
 * `schemas` lists a tool whose input schema is not an object schema.
 */
function breaker(breakage: Breakage, counter: { calls: number }): Server {
  const server = new Server({ name: "contract-breaker", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools:
      breakage === "schemas"
        ? [{ name: "bad.ask", inputSchema: { type: "string" } as never }]
        : [
            {
              name: "bad.ask",
              inputSchema: { type: "object", properties: { question: { type: "string" } } },
            },
            { name: "bad.ping", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
            { name: "other.secret", inputSchema: { type: "object" } },
          ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    counter.calls += 1;
    if (request.params.name === "bad.ping") return { content: [{ type: "text", text: "pong" }] };
    if (breakage === "errors")
      return { isError: true, content: [{ type: "text", text: "the index is down" }] };
    const question = String(request.params.arguments?.question ?? "");
    const structuredContent =
      question === "zzzz qqqq"
        ? { ok: "maybe", answer: 42 }
        : { ok: true, answer: `answer number ${counter.calls}`, items: [], options: [] };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  });
  return server;
}

/** The breaking server over Streamable HTTP on loopback (stateless: one server per request). */
export async function startContractBreaker(
  breakage: Breakage,
): Promise<{ url: string; close(): Promise<void> }> {
  const counter = { calls: 0 };
  const served = await serveStatelessMcp(() => breaker(breakage, counter), { port: 0 });
  return { url: served.url, close: served.close };
}
