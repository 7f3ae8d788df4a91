import { createServer, type IncomingMessage, type Server } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** Largest request body read: MCP requests are small JSON. */
const MAX_BODY_BYTES = 1_000_000;

/** An MCP server as far as serving it needs: the SDK's `McpServer` and low-level `Server` both fit. */
export interface ConnectableServer {
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

/** A running MCP server over Streamable HTTP. */
export interface StatelessHttpServer {
  /** The MCP endpoint, `http://host:port/mcp`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
}

/**
 * Serves MCP over stateless Streamable HTTP at `/mcp` — a fresh server and transport
 * per request, so any number of roomgate processes can share it — with `GET /healthz`
 * for health checks. `port: 0` takes a free port; `onRequest` sees each request first.
 */
export async function serveStatelessMcp(
  build: () => ConnectableServer,
  options: { host?: string; port: number; onRequest?: (req: IncomingMessage) => void },
): Promise<StatelessHttpServer> {
  const http: Server = createServer((req, res) => {
    options.onRequest?.(req);
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      return;
    }
    if (path !== "/mcp") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    readJson(req)
      .then(async (body) => {
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        const server = build();
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      })
      .catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(400, { "content-type": "application/json" }).end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32700, message: (err as Error).message },
              id: null,
            }),
          );
        }
      });
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, host, resolve);
  });
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return {
    url: `http://${host}:${port}/mcp`,
    port,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
