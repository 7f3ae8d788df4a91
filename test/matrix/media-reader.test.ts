import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { MediaReader } from "../../src/matrix/media-reader.js";

/** A homeserver whose media endpoint answers slowly, or streams more than it should. */
let server: Server;
let url: string;
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url ?? "");
    if (req.url?.includes("/slow")) {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
      return; // never ends: only the reader's timeout can stop it
    }
    if (req.url?.includes("/endless")) {
      res.writeHead(200, { "content-type": "text/plain" });
      const chunk = "x".repeat(1024);
      const timer = setInterval(() => {
        if (!res.write(chunk)) return;
      }, 1);
      res.on("close", () => clearInterval(timer));
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("small text");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("MediaReader", () => {
  const reader = (timeoutMs = 5000) => new MediaReader(url, "tok", 4096, timeoutMs, silentLogger());
  const file = (id: string, claimedSize = 1) => ({
    name: `${id}.txt`,
    mime: "text/plain",
    claimedSize,
    url: `mxc://hs/${id}`,
  });

  it("reads a small text file with the access token", async () => {
    expect(await reader().read(file("ok"))).toMatchObject({ text: "small text", size: 10 });
    expect(requests.at(-1)).toBe("/_matrix/client/v1/media/download/hs/ok");
  });

  it("stops reading at the byte cap whatever size the sender claimed", async () => {
    const result = await reader().read(file("endless", 3));
    expect(result.text).toBeUndefined();
    expect(result.rejected).toMatch(/too large \(\d+ bytes\); the limit is 4096 bytes/);
  });

  it("gives up a download that takes longer than the timeout, with a clear reason", async () => {
    const started = Date.now();
    const result = await reader(300).read(file("slow"));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.rejected).toBe(
      `"slow.txt" took too long to download, so it was not read. Please send it again.`,
    );
  });

  it("refuses early when the sender's claimed size is already over the cap, without a request", async () => {
    const before = requests.length;
    expect((await reader().read(file("ok", 10_000))).rejected).toMatch(/too large \(10000 bytes\)/);
    expect(requests.length).toBe(before);
  });
});
