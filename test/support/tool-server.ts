import { createServer, type Server as HttpServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

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
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      const server = build();
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
      void server.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
