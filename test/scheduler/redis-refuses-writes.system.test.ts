import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RoomLease } from "../../src/scheduler/room-lease.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { waitFor } from "../support/wait.js";

/**
 * A Redis that refuses writes for a while (OOM: maxmemory reached with noeviction;
 * MISCONF: a snapshot it cannot write) refuses a script at its first write, so the
 * fenced write that records what a turn sent is sent again until Redis takes it,
 * instead of failing the turn and leaving its sent part to be sent a second time by
 * the worker that takes the room over (a duplicate the fault script counted).
 */
const LANE = "telegram";
const SETTINGS = { leaseMs: 5000, turnRecordMs: 60_000 };
const event = (id: string) => JSON.stringify({ eventId: id });
let dir: string;
let server: RedisServer;
let redis: Redis;
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-refuses-"));
  server = await RedisServer.start({ dir: join(dir, "redis") });
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function refusals(kind: string): Promise<number> {
  const stats = await redis.info("errorstats");
  return Number(new RegExp(`errorstat_${kind}:count=(\\d+)`).exec(stats)?.[1] ?? 0);
}

const faults = {
  OOM: {
    start: async () => {
      await redis.config("SET", "maxmemory-policy", "noeviction");
      await redis.config("SET", "maxmemory", "1");
    },
    end: async () => void (await redis.config("SET", "maxmemory", "0")),
  },
  MISCONF: {
    // The snapshot's file name is taken by a directory: the save fails, and writes are refused.
    start: async () => {
      mkdirSync(join(dir, "redis", "dump.rdb", "taken"), { recursive: true });
      await redis.config("SET", "save", "3600 1");
      await redis.bgsave();
      await waitFor(
        async () => (await redis.info("persistence")).includes("rdb_last_bgsave_status:err"),
        undefined,
        "the snapshot failing",
      );
    },
    end: async () => {
      rmSync(join(dir, "redis", "dump.rdb"), { recursive: true, force: true });
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
  },
};

describe("a turn's record while Redis refuses writes", () => {
  it.each(Object.keys(faults) as (keyof typeof faults)[])(
    "%s: the park that records the sent part waits until Redis takes it",
    async (kind) => {
      n += 1;
      const room = `telegram:7:${kind}:${n}`;
      const keys = new SchedulerKeys(`t${kind.toLowerCase()}${n}`);
      const scripts = new SchedulerScripts(redis, keys);
      await scripts.intake.enqueue({ room, lane: LANE, eventId: "a", entry: event("a"), dedupeMs: 60_000 });
      expect((await scripts.claim({ room, lane: LANE, token: "t1", ...SETTINGS })).kind).toBe("claimed");
      const lease = new RoomLease(scripts, room, LANE, "t1", SETTINGS);

      const before = await refusals(kind);
      await faults[kind].start();
      const parked = lease.park({
        writes: { sent: { "part:0": "chat:7" } },
        head: event("a"),
        delayMs: 0,
        verdict: "wait",
        reason: "send window full",
        deadlineMs: 60_000,
        letterId: "x",
      });
      await waitFor(
        async () => (await refusals(kind)) > before,
        undefined,
        `Redis refusing the park (${kind})`,
      );
      await faults[kind].end();

      expect((await parked).kind).toBe("parked");
      expect(await redis.hget(keys.turn(room), "part:part:0")).toBe("chat:7");
    },
  );
});
