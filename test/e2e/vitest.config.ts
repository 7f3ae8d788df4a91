import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** The opt-in end-to-end tests against real servers (scripts/synapse-e2e.sh runs them); not part of `npm test`. */
export default defineConfig({
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    globalSetup: ["test/support/system-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
