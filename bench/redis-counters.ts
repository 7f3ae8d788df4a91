import { spawn } from "node:child_process";
import type { Redis } from "ioredis";
import "../src/scheduler/scheduler-scripts.js";
import "../src/sessions/audit-log.js";
import "../src/scheduler/rate-limiter.js";
import { declaredScripts } from "../src/scheduler/lua-script.js";

/** Names roomgate's scripts by their SHA1, as they are sent; others (bullmq's) keep their hash. */
function scriptNames(): Map<string, string> {
  return new Map(declaredScripts().map((s) => [s.sha, s.id]));
}

/** Commands the Redis servers executed so far by name (INFO commandstats), those run inside scripts included. */
export async function commandsExecuted(servers: Redis[]): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const redis of servers) {
    const info = await redis.info("commandstats");
    for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
      calls.set(match[1]!, (calls.get(match[1]!) ?? 0) + Number(match[2]));
  }
  return calls;
}

/** What `after` counted beyond `before`, by command. */
export function commandsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [name, n] of after)
    if (n > (before.get(name) ?? 0)) delta.set(name, n - (before.get(name) ?? 0));
  return delta;
}

/**
 * Counts the commands clients send (round trips) to every server of `urls`, from
 * `redis-cli monitor` while `during` runs: commands a script runs inside Redis are
 * not counted, and a MULTI…EXEC block counts once; pipelined commands count one each.
 */
export async function countRoundTrips(
  urls: string[],
  during: () => Promise<void>,
): Promise<{ total: number; byCommand: Map<string, number> }> {
  const names = scriptNames();
  let count = 0;
  const byCommand = new Map<string, number>();
  const add = (name: string) => {
    count += 1;
    byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
  };
  const monitors = urls.map((url) => {
    const { hostname, port } = new URL(url);
    const monitor = spawn("redis-cli", ["-h", hostname, "-p", port, "monitor"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    let buffered = "";
    const inMulti = new Set<string>();
    monitor.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^\d+\.\d+ \[\d+ ([^\]]+)\] "([^"]+)"(?: "([^"]+)")?/.exec(line);
        if (!match || match[1] === "lua") continue;
        const [, client, command, first] = match;
        const upper = command!.toUpperCase();
        const name = upper === "EVALSHA" ? `EVALSHA ${names.get(first ?? "") ?? first?.slice(0, 8)}` : upper;
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
    return monitor;
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    await during();
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 300));
    monitors.forEach((m) => m.kill("SIGTERM"));
  }
  return { total: count, byCommand };
}
