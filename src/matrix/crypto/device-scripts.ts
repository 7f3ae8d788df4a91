import { readFileSync } from "node:fs";
import type { RedisClient } from "../../sessions/redis-connection.js";

const SCRIPTS = {
  rgMxAcquireDevice: { file: "acquire-device", keys: 1 },
  rgMxRenewDevice: { file: "renew-device", keys: 1 },
  rgMxReleaseDevice: { file: "release-device", keys: 1 },
  rgMxWriteDevice: { file: "write-device", keys: 2 },
} as const;

type ScriptName = keyof typeof SCRIPTS;
type ScriptRunner = (...args: (string | number | Buffer)[]) => Promise<unknown>;

/**
 * The device lease's documented Lua scripts (src/matrix/lua), registered with ioredis
 * `defineCommand`; each returns 1 (done) or 0 (the caller does not hold the lease).
 */
export class DeviceScripts {
  constructor(private readonly redis: RedisClient) {
    for (const [name, { file, keys }] of Object.entries(SCRIPTS)) {
      if (name in redis) continue;
      const lua = readFileSync(new URL(`../lua/${file}.lua`, import.meta.url), "utf8");
      redis.defineCommand(name, { lua, numberOfKeys: keys });
    }
  }

  /** Runs one script with its KEYS then ARGV; true when it answered 1. */
  async run(name: ScriptName, ...args: (string | number | Buffer)[]): Promise<boolean> {
    return (await this.result(name, ...args)) === 1;
  }

  /** Runs a script and returns its integer reply, for scripts that answer more than yes or no. */
  async result(name: ScriptName, ...args: (string | number | Buffer)[]): Promise<number> {
    const runner = (this.redis as unknown as Record<ScriptName, ScriptRunner>)[name];
    return Number(await runner.call(this.redis, ...args));
  }
}
