import { execFileSync } from "node:child_process";
import type { TestProject } from "vitest/node";
import { provideRedis } from "./redis-setup.js";

/**
 * The system tier's global setup (and the Synapse e2e run's): builds dist/ so the
 * `roomgate` processes the tests start run current code, then starts the tier's
 * redis-server. The only tier that builds.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    stdio: "inherit",
  });
  execFileSync(process.execPath, ["scripts/copy-assets.mjs"], { stdio: "inherit" });
  return provideRedis(project);
}
