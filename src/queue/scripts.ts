import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

function load(url: URL): string {
  return readFileSync(url, "utf8");
}

const prelude = load(new URL("./lua/fence.lua", import.meta.url));
const windows = load(new URL("../sessions/lua/windows.lua", import.meta.url));
const flood = load(new URL("./lua/flood.lua", import.meta.url));

function script(file: string, ...fragments: string[]): { file: string; lua: string } {
  return {
    file,
    lua: [prelude, windows, ...fragments, load(new URL(`./lua/${file}.lua`, import.meta.url))].join("\n"),
  };
}

/** The scheduler's scripts (src/queue/lua), each with its number of keys (undefined = variable). */
const SCRIPTS = {
  rgEnqueue: { ...script("enqueue-event", flood), keys: undefined },
  rgFloodCheck: { ...script("check-flood", flood), keys: 4 },
  rgClaim: { ...script("claim-room"), keys: 3 },
  rgStep: { ...script("turn-step"), keys: undefined },
  rgFinish: { ...script("finish-turn"), keys: 9 },
  rgPark: { ...script("park-turn"), keys: 11 },
  rgRenew: { ...script("renew-leases"), keys: 1 },
  rgRequeue: { ...script("requeue-dead-letter"), keys: 6 },
} as const;

/** Each script's file name and its text as sent, so a tool watching Redis can name an EVALSHA. */
export function scriptTexts(): { file: string; lua: string }[] {
  return Object.values(SCRIPTS).map(({ file, lua }) => ({ file, lua }));
}

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
