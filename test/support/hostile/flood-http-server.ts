import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { floodServer } from "./flood-tools.js";

/** A hostile namespace over Streamable HTTP whose `h.flood` streams a reply of `floodBytes`. */
export interface FloodHttpServer {
  url: string;
  /** Bytes of flood replies actually written before the client stopped reading. */
  floodWritten: number;
  floods: number;
  close(): Promise<void>;
}

const MB = Buffer.alloc(1_000_000, "x");

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
}

/**
 * Serves `h.ask` and `h.flood` statelessly; a `tools/call` of `h.flood` is answered by
 * hand, as a single JSON body or one server-sent event (`mode`), written a megabyte at
 * a time with backpressure, so this process never holds the whole reply.
 */
export async function startFloodHttpServer(floodBytes: number): Promise<FloodHttpServer> {
  const state = { floodWritten: 0, floods: 0 };
  const flood = async (res: ServerResponse, id: unknown, sse: boolean) => {
    state.floods++;
    let closed = false;
    res.on("close", () => (closed = true));
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
    res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
    res.write(sse ? `event: message\ndata: ${head}` : head);
    for (let sent = 0; sent < floodBytes && !closed; sent += MB.length) {
      state.floodWritten += MB.length;
      if (!res.write(MB)) await drainedOrClosed(res);
    }
    if (!closed) res.end(sse ? `"}]}}\n\n` : `"}]}}`);
  };
  const http = createServer((req, res) => {
    readBody(req)
      .then(async (body) => {
        const message = body as {
          method?: string;
          id?: unknown;
          params?: { name?: string; arguments?: { mode?: string } };
        };
        if (message?.method === "tools/call" && message.params?.name === "h.flood") {
          return flood(res, message.id, message.params.arguments?.mode === "sse");
        }
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        const server = floodServer(() => "never sent this way");
        res.on("close", () => {
          void transport.close();
          void server.close();
        });
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(400).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get floodWritten() {
      return state.floodWritten;
    },
    get floods() {
      return state.floods;
    },
    close: () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
