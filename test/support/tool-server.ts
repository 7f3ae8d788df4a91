import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { serveStatelessMcp } from "../../src/demo/stateless-http.js";

/** One tool of a test server: its MCP description and what a call returns. */
export interface TestTool {
  tool: Tool;
  run(args: Record<string, unknown>): CallToolResult | Promise<CallToolResult>;
}

/** A test MCP server over Streamable HTTP, recording every call it receives. */
export interface ToolServer {
  url: string;
  calls: { name: string; args: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** Serves the given tools over stateless Streamable HTTP on loopback. */
export async function startToolServer(tools: TestTool[]): Promise<ToolServer> {
  const calls: ToolServer["calls"] = [];
  const build = () => {
    const server = new Server({ name: "test-tools", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => t.tool) }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const args = request.params.arguments ?? {};
      calls.push({ name: request.params.name, args });
      const found = tools.find((t) => t.tool.name === request.params.name);
      if (!found) return { isError: true, content: [{ type: "text", text: "unknown tool" }] };
      return found.run(args);
    });
    return server;
  };
  const served = await serveStatelessMcp(build, { port: 0 });
  return { url: served.url, calls, close: served.close };
}
