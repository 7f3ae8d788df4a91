import type { IncomingHttpHeaders } from "node:http";
import { isJSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { createDemoServer, type DemoServerOptions } from "../../src/demo/server.js";
import { serveStatelessMcp } from "../../src/demo/stateless-http.js";

/** The demo namespaces served over Streamable HTTP on loopback (stateless: one server per request). */
export interface McpHttpServer {
  url: string;
  /** Headers of every request received, to check configured headers arrive. */
  requests: IncomingHttpHeaders[];
  /** Every tools/call received, as `tool<TAB>json arguments` (the demo server's call log lines). */
  calls: string[];
  close(): Promise<void>;
}

/** Starts the demo MCP server behind the SDK's Streamable HTTP transport on a free port. */
export async function startMcpHttpServer(options: DemoServerOptions): Promise<McpHttpServer> {
  const requests: IncomingHttpHeaders[] = [];
  const calls: string[] = [];
  const served = await serveStatelessMcp(
    () => {
      const server = createDemoServer(options);
      return {
        // Set before connect: the SDK keeps an onmessage already set and calls it first.
        connect: (transport) => {
          transport.onmessage = (message) => {
            if (!isJSONRPCRequest(message) || message.method !== "tools/call") return;
            const { name, arguments: args } = message.params ?? {};
            calls.push(`${String(name)}\t${JSON.stringify(args ?? {})}`);
          };
          return server.connect(transport);
        },
        close: () => server.close(),
      };
    },
    { port: 0, onRequest: (req) => requests.push(req.headers) },
  );
  return { url: served.url, requests, calls, close: served.close };
}
