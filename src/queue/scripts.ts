import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

function load(url: URL): string {
  return readFileSync(url, "utf8");
}

const prelude = load(new URL("./lua/fence.lua", import.meta.url));
const windows = load(new URL("../sessions/lua/windows.lua", import.meta.url));
const flood = load(new URL("./lua/flood.lua", import.meta.url));

function script(name: string, ...fragments: string[]): string {
  return [prelude, windows, ...fragments, load(new URL(`./lua/${name}.lua`, import.meta.url))].join("\n");
}

/** The scheduler's scripts (src/queue/lua), each with its number of keys (undefined = variable). */
const SCRIPTS = {
  rgEnqueue: { lua: script("enqueue-event", flood), keys: undefined },
  rgFloodCheck: { lua: script("check-flood", flood), keys: 4 },
  rgClaim: { lua: script("claim-room"), keys: 3 },
  rgStep: { lua: script("turn-step"), keys: undefined },
  rgFinish: { lua: script("finish-turn"), keys: 9 },
  rgPark: { lua: script("park-turn"), keys: 11 },
  rgRenew: { lua: script("renew-leases"), keys: 1 },
  rgRequeue: { lua: script("requeue-dead-letter"), keys: 6 },
} as const;

type ScriptName = keyof typeof SCRIPTS;
type ScriptRunner = (...args: (string | number)[]) => Promise<unknown>;

/**
 * The queue's documented Lua scripts, registered on one connection with ioredis
 * `defineCommand`: each call is an EVALSHA (the text is sent once, on a NOSCRIPT).
 */
export class QueueScripts {
  constructor(private readonly redis: Redis) {
    for (const [name, { lua, keys }] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) {
        redis.defineCommand(name, keys === undefined ? { lua } : { lua, numberOfKeys: keys });
      }
    }
  }

  /** Runs one script; `args` are its KEYS then ARGV (variable-key scripts take the key count first). */
  run(name: ScriptName, ...args: (string | number)[]): Promise<unknown> {
    const runner = (this.redis as unknown as Record<ScriptName, ScriptRunner>)[name];
    return runner.call(this.redis, ...args);
  }
}
