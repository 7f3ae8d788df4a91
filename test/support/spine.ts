import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigSchema, type Config } from "../../src/core/config.js";
import { silentLogger, type Logger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "./redis.js";
import { TestRooms } from "./test-room.js";

/** The demo server run from source (no dist/ build needed): a namespace command is `[process.execPath, DEMO_SERVER]`. */
export const DEMO_SERVER = join(process.cwd(), "test", "support", "demo-server.mjs");

/** A config whose namespaces are the real demo server as child processes, with a call log. */
export function demoNamespaces(
  env: Record<string, string> = {},
  namespaces: string[] = ["feed", "runs"],
): { config: Config; callLog: string } {
  const callLog = join(mkdtempSync(join(tmpdir(), "roomgate-calls-")), "calls.log");
  const config = ConfigSchema.parse({
    namespaces: Object.fromEntries(
      namespaces.map((ns) => [
        ns,
        {
          command: [process.execPath, DEMO_SERVER],
          env: { ATTEST_TOOLS: ns, DEMO_CALL_LOG: callLog, ...env },
        },
      ]),
    ),
  });
  return { config, callLog };
}

/** Tool calls that reached the demo servers, one `tool<TAB>json` line each. */
export function callsIn(callLog: string): string[] {
  if (!existsSync(callLog)) return [];
  return readFileSync(callLog, "utf8").split("\n").filter(Boolean);
}

/** A running spine (real Redis, queue, worker, engine, demo namespaces) with test rooms. */
export interface Spine {
  redis: TestRedis;
  rooms: TestRooms;
  runtime: Runtime;
  config: Config;
  callLog: string;
  /** Starts another process-like runtime on the same Redis and prefix. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the spine for one test file. */
export async function startSpine(
  options: {
    namespace?: string;
    env?: Record<string, string>;
    config?: Config;
    callLog?: string;
    /** Where the runtime logs (silent unless a test reads it). */
    log?: Logger;
  } = {},
): Promise<Spine> {
  const redis = await testRedis();
  const demo = demoNamespaces(options.env);
  const config = options.config ?? demo.config;
  const callLog = options.callLog ?? demo.callLog;
  const rooms = new TestRooms(options.namespace ?? "feed");
  const start = () =>
    startRuntime({
      config,
      redisUrl: redis.url,
      prefix: redis.prefix,
      log: options.log ?? silentLogger(),
      platforms: [rooms.factory()],
    });
  const spine: Spine = {
    redis,
    rooms,
    config,
    callLog,
    runtime: await start(),
    async restart() {
      await spine.runtime.stop();
      spine.runtime = await start();
    },
    async stop() {
      await spine.runtime.stop();
      await redis.cleanup();
    },
  };
  return spine;
}
