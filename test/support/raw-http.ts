import { request as httpRequest } from "node:http";
import { connect, type Socket } from "node:net";

/** One HTTP exchange from a chosen loopback address (127.0.0.x), so tests can be different sources. */
export async function sendFrom(
  port: number,
  options: { from: string; method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        localAddress: options.from,
        method: options.method ?? "POST",
        path: options.path,
        headers: options.headers,
        agent: false,
      },
      (res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => (body += chunk.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** A raw TCP connection to the listener: what it was sent back, and when it was closed. */
export interface RawConnection {
  socket: Socket;
  /** Everything the server wrote so far. */
  received(): string;
  /** Resolves when the server (or the test) closed the connection, with the ms since it opened. */
  closed: Promise<number>;
}

/** Opens a raw connection from `from` and resolves once it is connected. */
export async function openRaw(port: number, from: string): Promise<RawConnection> {
  const started = Date.now();
  const socket = connect({ host: "127.0.0.1", port, localAddress: from });
  let data = "";
  socket.on("data", (chunk: Buffer) => (data += chunk.toString()));
  // A reset from the server is a close as well.
  socket.on("error", () => undefined);
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now() - started)));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return { socket, received: () => data, closed };
}
