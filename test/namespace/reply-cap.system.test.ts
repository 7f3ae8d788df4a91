import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnswerSchema } from "../../src/core/answer.js";
import { NamespaceConfigSchema } from "../../src/core/config.js";
import { NamespaceError } from "../../src/core/errors.js";
import { silentLogger } from "../../src/core/log.js";
import { NamespaceClient } from "../../src/namespace/namespace-client.js";
import { DEFAULT_NAMESPACE_LIMITS } from "../../src/namespace/namespace-limits.js";
import { startFloodHttpServer, type FloodHttpServer } from "../support/hostile/flood-http-server.js";

const FLOOD_BYTES = 150_000_000;
let server: FloodHttpServer;
const clients: NamespaceClient[] = [];

function client(raw: Record<string, unknown>, maxBytes?: number): NamespaceClient {
  const limits =
    maxBytes === undefined ? undefined : { ...DEFAULT_NAMESPACE_LIMITS, maxToolResultBytes: maxBytes };
  const c = new NamespaceClient("h", NamespaceConfigSchema.parse(raw), silentLogger(), limits);
  clients.push(c);
  return c;
}

async function failure(call: Promise<unknown>): Promise<NamespaceError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NamespaceError);
  return err as NamespaceError;
}

async function pong(c: NamespaceClient, question: string): Promise<string> {
  return AnswerSchema.parse((await c.call("h.ask", { question })).structuredContent).answer;
}

beforeAll(async () => {
  server = await startFloodHttpServer(FLOOD_BYTES);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

describe("#1 a cap on every namespace reply (limits.maxToolResultBytes)", () => {
  it("#1 reads a 150 MB JSON reply over HTTP no further than 20 MB, says so, and goes on", async () => {
    const h = client({ url: server.url });
    const before = server.floodWritten;
    const err = await failure(h.call("h.flood", { mode: "json" }));
    expect(err.userText).toContain("was larger than 20 MB, so it was not read");
    // The reader stopped soon after the cap: the server could not push the whole reply.
    expect(server.floodWritten - before).toBeLessThan(60_000_000);
    expect(await pong(h, "still there?")).toBe("pong: still there?");
  });

  it("#1 caps each server-sent event of an HTTP reply stream the same way", async () => {
    const h = client({ url: server.url });
    const err = await failure(h.call("h.flood", { mode: "sse" }));
    expect(err.userText).toContain("was larger than 20 MB");
    expect(await pong(h, "after the stream")).toBe("pong: after the stream");
  });

  it("#1 drops an oversized stdio line unread, fails only its call, and keeps the server running", async () => {
    const h = client(
      {
        command: [
          process.execPath,
          "--import",
          "tsx",
          join(process.cwd(), "test/support/hostile/flood-stdio.ts"),
        ],
        env: { FLOOD_BYTES: "5000000" },
      },
      2_000_000,
    );
    expect(await pong(h, "first")).toBe("pong: first");
    const pid = h.pid;
    const err = await failure(h.call("h.flood", {}));
    expect(err.userText).toContain("was larger than 2 MB, so it was not read");
    expect(err.userText).toContain("limits.maxToolResultBytes");
    expect(await pong(h, "second")).toBe("pong: second");
    expect(h.pid).toBe(pid);
  });

  it("#1 applies the configured cap to small replies too, with the limit in the person's line", async () => {
    const h = client({ url: server.url }, 10_000);
    const err = await failure(h.call("h.flood", { mode: "json" }));
    expect(err.userText).toContain("larger than 10 KB");
  });
});
