import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedRedis } from "../../src/sessions/embedded-redis.js";

/** Starts one real redis-server for the run and provides its URL as `redisUrl`; returns the teardown. */
export async function provideRedis(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "roomgate-test-redis-"));
  // Persistent like a production Redis: `start` and `worker` refuse one that is not.
  const redis = await startEmbeddedRedis({ dir, persist: true });
  project.provide("redisUrl", redis.url);
  return async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

/**
 * The redis tier's global setup: one real redis-server for the whole tier on a free
 * port (each test uses its own random key prefix). No dist/ build: the tier runs the
 * code in-process, and namespace children from source.
 */
export default function setup(project: TestProject): Promise<() => Promise<void>> {
  return provideRedis(project);
}

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
