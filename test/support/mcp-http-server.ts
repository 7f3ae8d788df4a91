import type { IncomingHttpHeaders } from "node:http";
import { createDemoServer, type DemoServerOptions } from "../../src/demo/server.js";
import { serveStatelessMcp } from "../../src/demo/stateless-http.js";

/** The demo namespaces served over Streamable HTTP on loopback (stateless: one server per request). */
export interface McpHttpServer {
  url: string;
  /** Headers of every request received, to check configured headers arrive. */
  requests: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** Starts the demo MCP server behind the SDK's Streamable HTTP transport on a free port. */
export async function startMcpHttpServer(options: DemoServerOptions): Promise<McpHttpServer> {
  const requests: IncomingHttpHeaders[] = [];
  const served = await serveStatelessMcp(() => createDemoServer(options), {
    port: 0,
    onRequest: (req) => requests.push(req.headers),
  });
  return { url: served.url, requests, close: served.close };
}
