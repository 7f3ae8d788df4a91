import { spawn } from "node:child_process";
import type { Redis } from "ioredis";

/** Total commands Redis executed so far (INFO commandstats), those run inside scripts included. */
export async function commandsExecuted(redis: Redis): Promise<number> {
  const info = await redis.info("commandstats");
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(match[1]);
  return total;
}

/**
 * Counts the commands clients send (round trips), from `redis-cli monitor` while
 * `during` runs: commands a script runs inside Redis are not counted, and a
 * MULTI…EXEC block counts once; pipelined commands count one each.
 */
export async function countRoundTrips(
  url: string,
  during: () => Promise<void>,
): Promise<{ total: number; byCommand: Map<string, number> }> {
  const { hostname, port } = new URL(url);
  const monitor = spawn("redis-cli", ["-h", hostname, "-p", port, "monitor"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let count = 0;
  const byCommand = new Map<string, number>();
  const add = (name: string) => {
    count += 1;
    byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
  };
  let buffered = "";
  const inMulti = new Set<string>();
  monitor.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      const match = /^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line);
      if (!match || match[1] === "lua") continue;
      const [, client, command] = match;
      const name = command!.toUpperCase();
      if (name === "MULTI") {
        inMulti.add(client!);
        add("MULTI…EXEC");
      } else if (name === "EXEC" || name === "DISCARD") {
        inMulti.delete(client!);
      } else if (!inMulti.has(client!)) {
        add(name);
      }
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    await during();
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 300));
    monitor.kill("SIGTERM");
  }
  return { total: count, byCommand };
}
