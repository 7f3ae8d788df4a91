import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import type { Runtime } from "../../src/runtime.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { MatrixHomeserverStandin } from "./matrix-homeserver-standin.js";
import { snapshotRefusal } from "./snapshot-refusal.js";
import { capturingLogger } from "./telegram-fixtures.js";

/** What a test file gets from `matrixRefusalWorld`; `server` and `hs` exist once beforeAll ran. */
export interface MatrixRefusalWorld {
  server: RedisServer;
  hs: MatrixHomeserverStandin;
  /** The log the runtime under test writes to, read back by the test. */
  capture: ReturnType<typeof capturingLogger>;
  /** The runtime under test: the test sets it, afterAll stops it. */
  runtime: Runtime | undefined;
  /** Makes the Redis refuse writes (MISCONF) and waits until it does. */
  refuseWrites(): Promise<void>;
  /** Lets it take writes again and waits until it does. */
  acceptWrites(): Promise<void>;
}

/**
 * A Matrix test file's world around a redis-server of its own that can be made to
 * refuse writes: the server, the homeserver stand-in and a capturing log, started in
 * beforeAll; the runtime the test set, the stand-in and the server stopped in afterAll.
 * `name` prefixes the temporary folder.
 */
export function matrixRefusalWorld(name: string): MatrixRefusalWorld {
  let dir = "";
  let admin: Redis | undefined;
  const world = {
    capture: capturingLogger(),
    runtime: undefined,
    refuseWrites: () => snapshotRefusal.start(admin!, join(dir, "redis")),
    acceptWrites: () => snapshotRefusal.end(admin!, join(dir, "redis")),
  } as Partial<MatrixRefusalWorld> as MatrixRefusalWorld;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `${name}-`));
    world.server = await RedisServer.start({ dir: join(dir, "redis") });
    admin = new Redis(world.server.url, { maxRetriesPerRequest: 1 });
    world.hs = await MatrixHomeserverStandin.start();
  });
  afterAll(async () => {
    await world.runtime?.stop();
    admin?.disconnect();
    await world.hs?.close();
    await world.server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return world;
}
