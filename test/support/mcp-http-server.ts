import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createDemoServer, type DemoServerOptions } from "../../src/demo/server.js";

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
  const http: Server = createServer((req, res) => {
    requests.push(req.headers);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      const server = createDemoServer(options);
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
    requests,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
