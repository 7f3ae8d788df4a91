import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedRedis, type EmbeddedRedis } from "../../src/sessions/embedded-redis.js";

/**
 * The embedded Redis has a memory cap with noeviction (issue 25): a deployment that
 * stores more than it should is refused new writes, and keeps everything it stored
 * (queued turns, leases, sessions), instead of growing without bound or dropping keys.
 */
let dir: string;
let redis: EmbeddedRedis;
let client: Redis;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-embedded-"));
  redis = await startEmbeddedRedis({ dir, persist: false, maxMemoryMb: 3 });
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  client.disconnect();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the embedded Redis' memory cap", () => {
  it("refuses writes past the cap (OOM) and evicts nothing it stored", async () => {
    const value = "x".repeat(64 * 1024);
    let stored = 0;
    let refusal: Error | undefined;
    while (stored < 1000) {
      try {
        await client.set(`rg:fill:${stored}`, value);
        stored += 1;
      } catch (err) {
        refusal = err as Error;
        break;
      }
    }
    expect(refusal?.message).toMatch(/^OOM command not allowed/);
    expect(stored).toBeGreaterThan(0);
    expect(await client.dbsize()).toBe(stored);
    // Deleting makes room again: the cap is not a failure state.
    await client.del("rg:fill:0", "rg:fill:1");
    await expect(client.set("rg:after", "1")).resolves.toBe("OK");
  });

  it("uses 512 MB with noeviction when the configuration names no cap", async () => {
    const other = mkdtempSync(join(tmpdir(), "rg-embedded-default-"));
    const server = await startEmbeddedRedis({ dir: other, persist: false });
    const c = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      expect(await c.config("GET", "maxmemory")).toEqual(["maxmemory", String(512 * 1024 * 1024)]);
      expect(await c.config("GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "noeviction"]);
    } finally {
      c.disconnect();
      await server.stop();
      rmSync(other, { recursive: true, force: true });
    }
  });
});
