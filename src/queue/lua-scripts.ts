import { readFileSync } from "node:fs";
import { mastersOf, type RedisClient } from "../sessions/redis-connection.js";

function load(url: URL): string {
  return readFileSync(url, "utf8");
}

const prelude = load(new URL("./lua/fence.lua", import.meta.url));
const flood = load(new URL("./lua/flood.lua", import.meta.url));

function script(file: string, ...fragments: string[]): { file: string; lua: string } {
  return {
    file,
    lua: [prelude, ...fragments, load(new URL(`./lua/${file}.lua`, import.meta.url))].join("\n"),
  };
}

/** The scheduler's scripts (src/queue/lua) by command name; each takes its key count first. */
export const SCRIPTS = {
  rgEnqueue: script("enqueue-event", flood),
  rgFloodCheck: script("check-flood", flood),
  rgClaim: script("claim-room"),
  rgPeek: script("peek-shard"),
  rgStep: script("turn-step"),
  rgFinish: script("finish-turn"),
  rgPark: script("park-turn"),
  rgRelease: script("release-room"),
  rgRenew: script("renew-leases"),
  rgRequeue: script("requeue-dead-letter"),
} as const;

/** A scheduler script's command name. */
export type ScriptName = keyof typeof SCRIPTS;

/** Each script's file name and its text as sent, so a tool watching Redis can name an EVALSHA. */
export function scriptTexts(): { file: string; lua: string }[] {
  return Object.values(SCRIPTS).map(({ file, lua }) => ({ file, lua }));
}

/**
 * Registers the scripts on a client with ioredis `defineCommand` (once per client):
 * each call is an EVALSHA, routed on a Cluster by its first key's slot.
 */
export function defineScripts(redis: RedisClient): void {
  for (const [name, { lua }] of Object.entries(SCRIPTS)) {
    if (!(name in redis)) redis.defineCommand(name, { lua });
  }
}

/**
 * Loads the scripts (and `extra` ones) on every master at start, so that the first
 * call of each goes as EVALSHA too; a master that lost them (a restart, a failover)
 * gets a script's text again on its first NOSCRIPT.
 */
export async function preloadScripts(redis: RedisClient, extra: string[] = []): Promise<void> {
  const texts = [...Object.values(SCRIPTS).map((s) => s.lua), ...extra];
  await Promise.all(mastersOf(redis).flatMap((node) => texts.map((lua) => node.script("LOAD", lua))));
}
