import { createServer, type IncomingMessage, type Server } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createDemoServer, demoOptionsFromEnv, type DemoServerOptions } from "./server.js";

/** Largest request body the demo server reads: MCP requests are small JSON. */
const MAX_BODY_BYTES = 1_000_000;

/** A running demo server over Streamable HTTP. */
export interface DemoHttpServer {
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
 * Serves the demo namespaces over Streamable HTTP at `/mcp` (stateless: a fresh
 * server and transport per request, so any number of roomgate processes can share
 * it), with `GET /healthz` for container health checks. This is how a namespace
 * runs as a remote service instead of a child process.
 */
export async function startDemoHttpServer(
  options: DemoServerOptions & { host?: string; port: number },
): Promise<DemoHttpServer> {
  const http: Server = createServer((req, res) => {
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
        const server = createDemoServer(options);
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

/** Reads `--http PORT` and `--host HOST` from the demo server's arguments; undefined without `--http`. */
export function httpArgs(argv: readonly string[]): { port: number; host: string } | undefined {
  const at = argv.indexOf("--http");
  if (at === -1) return undefined;
  const port = Number(argv[at + 1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--http needs a port number, e.g. --http 8765`);
  }
  const hostAt = argv.indexOf("--host");
  return { port, host: hostAt === -1 ? "127.0.0.1" : (argv[hostAt + 1] ?? "127.0.0.1") };
}

/** Runs the demo server over HTTP until SIGTERM/SIGINT, with options from the environment. */
export async function mainHttp(
  args: { port: number; host: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const server = await startDemoHttpServer({ ...demoOptionsFromEnv(env), ...args });
  console.error(`roomgate demo server: MCP over Streamable HTTP at ${server.url}`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await server.close();
}
