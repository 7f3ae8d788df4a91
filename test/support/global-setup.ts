import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedRedis } from "../../src/sessions/embedded-redis.js";

/**
 * Starts one real redis-server for the whole run on a free port (each test uses its
 * own random key prefix) and builds dist/ so child processes run current code.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
  execFileSync(process.execPath, ["scripts/copy-assets.mjs"], { stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), "roomgate-test-redis-"));
  // Persistent like a production Redis: `start` and `worker` refuse one that is not.
  const redis = await startEmbeddedRedis({ dir, persist: true });
  project.provide("redisUrl", redis.url);
  return async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
