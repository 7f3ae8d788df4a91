import { connect, createServer, type Server, type Socket } from "node:net";

/** A Redis reached through SlowRedis: every request arrives `delayMs` late, as across zones. */
export interface SlowRedis {
  /** The URL to connect to (the target's login kept). */
  url: string;
  /**
   * From now on, answers reach the client `ms` late, or once `until` settles (in order):
   * a reply held up after its command ran.
   */
  holdReplies(ms: number, until?: Promise<void>): void;
  /** How many answers are being held up right now. */
  heldReplies(): number;
  close(): void;
}

/**
 * A TCP proxy in front of a real Redis that holds what clients send for `delayMs`
 * (in order) and passes answers at once (or `holdReplies` late): round trips become
 * what a person waits for, and an answer can come long after its command ran.
 */
export async function slowRedis(target: string, delayMs: number): Promise<SlowRedis> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let replyDelayMs = 0;
  let replyUntil: Promise<void> | undefined;
  let held = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(to.port), to.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
    let replies = Promise.resolve();
    upstream.on("data", (chunk) => {
      const hold = replyDelayMs;
      const until = replyUntil;
      if (hold > 0 || until) held += 1;
      replies = replies
        .then(() => (hold > 0 ? new Promise((resolve) => setTimeout(resolve, hold)) : undefined))
        .then(() => until)
        .then(() => {
          if (hold > 0 || until) held -= 1;
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
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: url.toString(),
    holdReplies: (ms, until) => {
      replyDelayMs = ms;
      replyUntil = until;
    },
    heldReplies: () => held,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
