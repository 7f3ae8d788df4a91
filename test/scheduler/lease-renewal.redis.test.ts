import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import type { RoomLease } from "../../src/scheduler/room-lease.js";
import { LeaseRenewals } from "../../src/scheduler/lease-renewal.js";
import { RoomWorker } from "../../src/scheduler/room-worker.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import type { TurnRunner } from "../../src/scheduler/turn-runner.js";
import { testRedis, type TestRedis } from "../support/redis.js";

/**
 * During a failover every write that waits for replicas (WAIT) holds its connection
 * for up to the wait's timeout, and retried writes keep it held. The lease renewals
 * must not queue behind them: a lease lost that way is taken over by another worker,
 * which sends again a part the first worker had sent.
 */
let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => db.cleanup());

it("keeps renewing a held room's lease while the scheduler's connection is held by a WAIT", async () => {
  const room = "telegram:7:77";
  await db.scheduler.intake.enqueue({ room, lane: "telegram", eventId: "a", entry: "{}", dedupeMs: 60_000 });
  let seen: { lost: boolean } | undefined;
  let release!: () => void;
  let claimed!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const running = new Promise<void>((resolve) => (claimed = resolve));
  // The turn itself is not under test: it holds the room and reports the lease.
  const runner = {
    runOne: async (lease: RoomLease) => {
      claimed();
      await held;
      seen = { lost: lease.lost };
      return {};
    },
  } as unknown as TurnRunner;
  const worker = new RoomWorker({
    scripts: db.scheduler,
    blocker: (name) => db.connection.create({ name }),
    runner,
    lanes: ["telegram"],
    concurrency: 2,
    leaseMs: 2000,
    turnRecordMs: 60_000,
    log: silentLogger(),
  });
  // The renewals' own client, as the runtime gives them.
  const renewals = new LeaseRenewals({
    scripts: new SchedulerScripts(db.connection.create({ name: "lease renewals" }), db.keys),
    leaseMs: 2000,
    log: silentLogger(),
    held: () => worker.leases(),
  });
  await renewals.start();
  await worker.start();
  await db.scheduler.wake("telegram", room);
  await running;
  // This instance has no replica: WAIT 1 blocks the connection for its whole timeout.
  // The turn holds the room for the whole block, twice the lease's length.
  await db.redis.call("WAIT", 1, 4000);
  release();
  await worker.stop(1000);
  await renewals.stop();
  expect(seen).toEqual({ lost: false });
}, 20_000);
