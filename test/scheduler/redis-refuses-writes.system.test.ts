import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { LeaseRenewals } from "../../src/scheduler/lease-renewal.js";
import { RoomLease } from "../../src/scheduler/room-lease.js";
import { RoomWorker } from "../../src/scheduler/room-worker.js";
import type { TurnRunner } from "../../src/scheduler/turn-runner.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { waitFor } from "../support/wait.js";
import { snapshotRefusal } from "../support/snapshot-refusal.js";

/**
 * A Redis that refuses writes for a while (OOM: maxmemory reached with noeviction;
 * MISCONF: a snapshot it cannot write) refuses a script at its first write, so the
 * fenced write that records what a turn sent is sent again until Redis takes it,
 * instead of failing the turn and leaving its sent part to be sent a second time by
 * the worker that takes the room over (a duplicate the fault script counted).
 */
const LANE = "telegram";
const SETTINGS = { leaseMs: 5000, turnRecordMs: 60_000 };
/** Short leases, so that a refusal outlasts them quickly. */
const TAKEOVER = { leaseMs: 2000, turnRecordMs: 60_000 };
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
    start: () => snapshotRefusal.start(redis, join(dir, "redis")),
    end: () => snapshotRefusal.end(redis, join(dir, "redis")),
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

/**
 * Writes refused for longer than a lease: the rooms' running entries expire while no
 * renewal is taken. Once Redis takes writes again, the holder's renewal and another
 * worker's claim race; a claim that wins takes over a room whose sent part was never
 * recorded, and sends it a second time (the fault script's `misconf` duplicates).
 */
describe("rooms whose leases ran out while Redis refused writes", () => {
  it.each(Object.keys(faults) as (keyof typeof faults)[])(
    "%s: their holder renews and records what it sent; no other worker takes one over",
    async (kind) => {
      n += 1;
      const keys = new SchedulerKeys(`tover${kind.toLowerCase()}${n}`);
      const scripts = new SchedulerScripts(redis, keys);
      const clients: Redis[] = [];
      const client = () => {
        const c = new Redis(server.url, { maxRetriesPerRequest: 1 });
        clients.push(c);
        return c;
      };
      const running = (room: string) => keys.laneShard(LANE, keys.shardOf(room)).running;
      const rooms = Array.from({ length: 10 }, (_, i) => `telegram:7:${kind}:${n}:${i}`);
      const held: RoomLease[] = [];
      for (const room of rooms) {
        const id = `e-${room}`;
        await scripts.intake.enqueue({ room, lane: LANE, eventId: id, entry: event(id), dedupeMs: 60_000 });
        const token = `holder/${room}:1`;
        expect((await scripts.claim({ room, lane: LANE, token, ...TAKEOVER })).kind).toBe("claimed");
        const lease = new RoomLease(scripts, room, LANE, token, TAKEOVER);
        // The part's request is out: marked, not yet recorded.
        await lease.step({}, "part:0");
        held.push(lease);
      }
      const renewals = new LeaseRenewals({
        scripts: new SchedulerScripts(client(), keys),
        leaseMs: TAKEOVER.leaseMs,
        log: silentLogger(),
        held: () => held,
      });
      await renewals.start();
      // Another worker, looking for due rooms and expired leases. A room it is handed with a
      // part marked and not recorded would be sent again.
      const resent: string[] = [];
      const claimed = new Set<string>();
      let done!: () => void;
      const end = new Promise<void>((resolve) => (done = resolve));
      const runner = {
        runOne: async (lease: RoomLease, input: { record: Record<string, string> }) => {
          if (input.record["sending:part:0"] !== undefined && input.record["part:part:0"] === undefined)
            resent.push(lease.room);
          claimed.add(lease.room);
          await end;
          return {};
        },
      } as unknown as TurnRunner;
      const other = new RoomWorker({
        scripts: new SchedulerScripts(client(), keys),
        blocker: () => client(),
        runner,
        lanes: [LANE],
        concurrency: rooms.length,
        ...TAKEOVER,
        log: silentLogger(),
      });
      await other.start();

      await faults[kind].start();
      // The parts' answers came: each holder records its part with its park, refused for now.
      const parks = held.map((lease) =>
        lease.park({
          writes: { sent: { "part:0": `ref-${lease.room}` } },
          head: event(`e-${lease.room}`),
          delayMs: 0,
          verdict: "wait",
          reason: "next part's window full",
          deadlineMs: 60_000,
          letterId: `x-${lease.room}`,
        }),
      );
      // Refused past every lease's end, and past the other worker's tries at a takeover.
      const expiry = Math.max(
        ...(await Promise.all(rooms.map(async (r) => Number(await redis.zscore(running(r), r))))),
      );
      await waitFor(
        async () => {
          const [s, us] = await redis.time();
          return Number(s) * 1000 + Number(us) / 1000 > expiry + 1500;
        },
        20_000,
        "the leases run out",
      );
      await faults[kind].end();

      expect((await Promise.all(parks)).map((p) => p.kind)).toEqual(rooms.map(() => "parked"));
      // Parked with their parts recorded, the rooms go on with the other worker.
      await waitFor(() => claimed.size === rooms.length, 20_000, "the other worker to take the parked rooms");
      expect(resent).toEqual([]);
      done();
      await other.stop(1000);
      await renewals.stop();
      for (const c of clients) c.disconnect();
    },
    60_000,
  );
});
