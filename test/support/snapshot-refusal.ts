import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { waitFor } from "./wait.js";

/**
 * Makes a test's own redis-server refuse writes with MISCONF (its snapshot cannot be
 * written: a directory takes the file's name) and takes it back, each waiting for
 * Redis to say so. `dataDir` is the server's data directory.
 */
export const snapshotRefusal = {
  async start(redis: Redis, dataDir: string): Promise<void> {
    // An earlier snapshot, written once a previous fault ended, is in the way.
    rmSync(join(dataDir, "dump.rdb"), { force: true });
    mkdirSync(join(dataDir, "dump.rdb", "taken"), { recursive: true });
    await redis.config("SET", "save", "3600 1");
    await redis.bgsave();
    await waitFor(
      async () => (await redis.info("persistence")).includes("rdb_last_bgsave_status:err"),
      undefined,
      "the snapshot failing",
    );
  },
  async end(redis: Redis, dataDir: string): Promise<void> {
    rmSync(join(dataDir, "dump.rdb"), { recursive: true, force: true });
    await redis.config("SET", "save", "");
    await waitFor(
      async () => {
        if ((await redis.info("persistence")).includes("rdb_last_bgsave_status:ok")) return true;
        await redis.bgsave().catch(() => undefined);
        return false;
      },
      undefined,
      "a snapshot written",
    );
  },
};
