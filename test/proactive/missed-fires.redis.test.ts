import { afterAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { InboundEventSchema } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";
import { elapse, waitFor } from "../support/wait.js";

// The missed-fire policy: while no process takes jobs (for longer than `downSeconds`),
// fires come due; when one is back, `missed: once` runs them as one late fire,
// `missed: skip` drops it, and both go on.

const ROOM = "shell:missed";
const PERIOD_MS = 2000;
const worlds: { db: TestRedis; runtimes: Runtime[] }[] = [];

function config() {
  const schedule = { room: ROOM, namespace: "feed", every: "2s", ask: "what should I read today?" };
  return ConfigSchema.parse({
    namespaces: demoNamespaces({}, ["feed"]).config.namespaces,
    schedules: [
      { ...schedule, name: "once-s", missed: "once" },
      { ...schedule, name: "skip-s", missed: "skip" },
    ],
    proactive: { downSeconds: 3 },
  });
}

/** A Redis prefix of its own (so the tests run side by side), its processes and what its room got. */
async function world() {
  const db = await testRedis();
  const runtimes: Runtime[] = [];
  worlds.push({ db, runtimes });
  return {
    async start(options: { workers: boolean; receivers: boolean }): Promise<Runtime> {
      const runtime = await startRuntime({
        config: config(),
        redisUrl: db.url,
        prefix: db.prefix,
        log: silentLogger(),
        platforms: [],
        ...options,
      });
      runtimes.push(runtime);
      return runtime;
    },
    /** Whether some process runs workers now (the uptime record not lapsed). */
    async up(): Promise<boolean> {
      return (await db.redis.exists(db.keys.proactiveUptime)) === 1;
    },
    /** The fire times queued in the room, by schedule (nobody serves the terminal room's lane here). */
    async queued(): Promise<Record<string, number[]>> {
      const out: Record<string, number[]> = {};
      for (const raw of await db.redis.lrange(db.schedulerKeys.inbox(ROOM), 0, -1)) {
        const event = InboundEventSchema.parse(JSON.parse(raw));
        if (event.kind !== "proactive") continue;
        (out[event.source.name] ??= []).push(event.source.at);
      }
      return out;
    },
  };
}

afterAll(async () => {
  for (const { db, runtimes } of worlds) {
    for (const r of runtimes) await r.stop(0);
    await db.cleanup();
  }
});

describe.concurrent("a fire missed while nothing took jobs", () => {
  it("runs once when roomgate is back (missed: once) or is skipped (missed: skip); both go on", async () => {
    const { start, queued } = await world();
    // `start` without workers: the schedules are made, nothing takes their fires.
    const down = await start({ workers: false, receivers: true });
    // The outage is the scenario: three periods come due with nobody to take them.
    await elapse(3 * PERIOD_MS + 500, "an outage of three periods");
    expect(await queued()).toEqual({});
    await down.stop(0);
    const back = Date.now();
    await start({ workers: true, receivers: false });
    // A fire on time after the return of each schedule: the late ones were taken before it.
    const late = (fires: Record<string, number[]>, name: string) =>
      (fires[name] ?? []).filter((at) => at < back - 1000);
    const onTime = (fires: Record<string, number[]>, name: string) =>
      (fires[name] ?? []).filter((at) => at >= back - 1000);
    const fires = await waitFor(
      async () => {
        const now = await queued();
        return onTime(now, "once-s").length > 0 && onTime(now, "skip-s").length > 0 && now;
      },
      undefined,
      "a fire on time of each schedule",
    );
    // Three or more periods passed: one late fire, not one per period.
    expect(late(fires, "once-s")).toHaveLength(1);
    expect(late(fires, "skip-s")).toHaveLength(0);
    expect(new Set(fires["once-s"]).size).toBe(fires["once-s"]!.length);
  });

  it("after workers ran and all stopped: an outage longer than downSeconds is missed fires, not one per period", async () => {
    const { start, queued, up } = await world();
    const running = await start({ workers: true, receivers: true });
    await waitFor(async () => (await queued())["once-s"]?.length, undefined, "a fire while running");
    await running.stop(0);
    const stopped = Date.now();
    const before = await queued();
    // Nothing runs for longer than downSeconds (the uptime record lapses) and three periods.
    await elapse(3 * PERIOD_MS + 500, "an outage of three periods");
    await waitFor(async () => !(await up()), undefined, "the uptime record lapsed (downSeconds)");
    const back = Date.now();
    await start({ workers: true, receivers: false });
    // A fire after the return of each schedule: those of the outage were taken before it.
    const after = (fires: Record<string, number[]>, name: string) =>
      (fires[name] ?? []).filter((at) => at >= back);
    const fires = await waitFor(
      async () => {
        const now = await queued();
        return after(now, "once-s").length > 0 && after(now, "skip-s").length > 0 && now;
      },
      undefined,
      "a fire of each schedule after the outage",
    );
    const during = (name: string) => (fires[name] ?? []).filter((at) => at > stopped && at < back);
    expect(before["once-s"]!.length).toBeGreaterThanOrEqual(1);
    expect(during("once-s"), fires["once-s"]!.join(", ")).toHaveLength(1);
    expect(during("skip-s"), fires["skip-s"]!.join(", ")).toHaveLength(0);
  });
});
