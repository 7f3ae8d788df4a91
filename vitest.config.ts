import { defineConfig } from "vitest/config";
import { SlowestFirst } from "./test/support/slowest-first.js";

/** The two suffixes that move a test out of the unit tier. */
const NOT_UNIT = ["test/**/*.redis.test.ts", "test/**/*.system.test.ts"];

/**
 * Tests in three tiers, chosen by the file name (test/ mirrors src/):
 * - unit, `X.test.ts`: pure, no Redis, no child processes, no global setup;
 * - redis, `X.redis.test.ts`: the code in-process against one real redis-server
 *   (the global setup provides `redisUrl`); namespace children run from source;
 * - system, `X.system.test.ts`: `roomgate` processes, topologies, bench and fault
 *   smoke tests; the only tier that builds dist/.
 * `npm test` runs all three in one pool; `npm run test:unit|test:redis|test:system` one.
 * The Synapse end-to-end tests (test/e2e) have their own config and are not in `npm test`.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most of a test's time is waiting (for a child, a stand-in, Redis): on 2 cores vitest's
    // default of one worker (cores - 1) leaves the box idle. ROOMGATE_TEST_WORKERS overrides.
    maxWorkers: Number(process.env.ROOMGATE_TEST_WORKERS ?? 3),
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: NOT_UNIT,
          setupFiles: ["test/support/unit-setup.ts"],
          // Pure files: one module graph per worker thread instead of one per file.
          pool: "threads",
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: "redis",
          include: ["test/**/*.redis.test.ts"],
          globalSetup: ["test/support/redis-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "system",
          include: ["test/**/*.system.test.ts"],
          globalSetup: ["test/support/system-setup.ts"],
        },
      },
    ],
  },
});
