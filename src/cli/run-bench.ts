import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchDirect, benchPipeline, formatBench } from "../ops/bench.js";
import { startEmbeddedRedis } from "../sessions/embedded-redis.js";
import { demoConfig } from "./demo-config.js";

/**
 * Measures the spine against a baseline run side by side: the same questions sent
 * straight to the demo namespace, then through inbox, queue, worker, sessions and
 * engine. Prints figures and ratios; it asserts nothing.
 */
export async function runBench(options: { turns: number; rooms: number; namespace: string }): Promise<void> {
  const config = demoConfig();
  const dir = mkdtempSync(join(tmpdir(), "roomgate-bench-"));
  const redis = process.env.REDIS_URL ? undefined : await startEmbeddedRedis({ dir, persist: false });
  try {
    const url = process.env.REDIS_URL ?? redis!.url;
    console.log(
      `roomgate bench: ${options.turns} turns over ${options.rooms} rooms, namespace ${options.namespace}\n`,
    );
    const baseline = await benchDirect(config, options.namespace, options.turns, options.rooms);
    const pipeline = await benchPipeline(config, url, options.namespace, options.turns, options.rooms);
    console.log(formatBench(baseline, pipeline));
  } finally {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
