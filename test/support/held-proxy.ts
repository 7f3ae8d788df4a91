import { connect, createServer, type Server, type Socket } from "node:net";

/** A TCP proxy in front of one server that can hold new connections, or everything. */
export interface HeldProxy {
  /** The address clients are given instead of the server's. */
  url: string;
  /** From now on, what new connections send waits until `release`; open connections pass on. */
  hold(): void;
  /**
   * From now on nothing passes either way on any connection, old or new, as with a
   * hung server whose sockets stay open (no RST, no answer) — until `release`.
   */
  stall(): void;
  /** Lets everything held through, and new connections pass again. */
  release(): void;
  /** Closes every open connection, as a server that died does (new ones are still accepted). */
  cut(): void;
  /** Connections accepted while holding. */
  held(): number;
  /** How many times a reply containing `text` was passed to a client (e.g. a published `+switch-master`). */
  delivered(text: string): number;
  close(): void;
}

/**
 * Puts a client at a chosen point of its connect sequence: a client that must ask the
 * server something before it can work (ioredis asks a sentinel for the master) waits,
 * mid-question, while the test changes the world around it.
 */
export async function heldProxy(port: number, host = "127.0.0.1"): Promise<HeldProxy> {
  const sockets = new Set<Socket>();
  const waiting: (() => void)[] = [];
  const seen: string[] = [];
  let holding = false;
  let stalled: Promise<void> | undefined;
  let heldCount = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    let gate = Promise.resolve();
    if (holding) {
      heldCount += 1;
      gate = new Promise((resolve) => waiting.push(resolve));
    }
    let back = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      gate = gate.then(() => stalled).then(() => void upstream.write(chunk));
    });
    upstream.on("data", (chunk: Buffer) => {
      back = back
        .then(() => stalled)
        .then(() => {
          seen.push(chunk.toString("latin1"));
          client.write(chunk);
        });
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", close).on("error", close);
    upstream.on("close", close).on("error", close);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    hold: () => void (holding = true),
    stall: () => {
      stalled ??= new Promise((resolve) => waiting.push(resolve));
    },
    release: () => {
      holding = false;
      stalled = undefined;
      for (const resolve of waiting.splice(0)) resolve();
    },
    cut: () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    held: () => heldCount,
    delivered: (text) => seen.filter((chunk) => chunk.includes(text)).length,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** The Redis at `redisUrl` behind a held proxy: the proxy, and the URL to it with the same credentials. */
export async function behindProxy(redisUrl: string): Promise<{ proxy: HeldProxy; url: string }> {
  const target = new URL(redisUrl);
  const proxy = await heldProxy(Number(target.port), target.hostname);
  const url = new URL(proxy.url);
  url.username = target.username;
  url.password = target.password;
  return { proxy, url: url.toString() };
}
