import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RoomgateError } from "../core/errors.js";

/**
 * `roomgate bench`: the same benchmark as `npm run bench` (bench/run-bench.ts, which
 * lives above the runtime), run from the source checkout this build came from.
 * Resolves with its exit code.
 */
export async function runBench(args: string[]): Promise<number> {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const script = fileURLToPath(new URL("../../bench/run-bench.ts", import.meta.url));
  if (!existsSync(script)) {
    throw new RoomgateError(`benchmark script not found at ${script}`, {
      userText: "the benchmark runs from a source checkout of roomgate (bench/ is missing here)",
    });
  }
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: root,
    stdio: "inherit",
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
}
