import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { scriptTexts } from "../src/queue/lua-scripts.js";
import { reserveSlotScript } from "../src/sessions/rate-limiter.js";

/** Names the scheduler's scripts by their SHA1, composed as src/queue/lua-scripts.ts sends them; others keep their hash. */
function scriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  for (const { file, lua } of [...scriptTexts(), { file: "reserve-slot", lua: reserveSlotScript }])
    names.set(createHash("sha1").update(lua).digest("hex"), file);
  return names;
}

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
  const names = scriptNames();
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
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    await during();
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 300));
    monitor.kill("SIGTERM");
  }
  return { total: count, byCommand };
}
