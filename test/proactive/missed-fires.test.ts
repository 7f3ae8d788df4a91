import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { InboundEventSchema } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";

// The missed-fire policy: while no process takes jobs, fires come due; when one is back,
// `missed: once` runs them as one late fire, `missed: skip` drops it, and both go on.

const ROOM = "shell:missed";
const PERIOD_MS = 2000;
let db: TestRedis;
const runtimes: Runtime[] = [];

function config() {
  const schedule = { room: ROOM, namespace: "feed", every: "2s", ask: "what should I read today?" };
  return ConfigSchema.parse({
    namespaces: demoNamespaces({}, ["feed"]).config.namespaces,
    schedules: [
      { ...schedule, name: "once-s", missed: "once" },
      { ...schedule, name: "skip-s", missed: "skip" },
    ],
    proactive: { lateSeconds: 1 },
  });
}

async function start(options: { workers: boolean; receivers: boolean }): Promise<Runtime> {
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
}

/** The fire times queued in the room, by schedule (nobody serves the terminal room's lane here). */
async function queued(): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const raw of await db.redis.lrange(db.keys.inbox(ROOM), 0, -1)) {
    const event = InboundEventSchema.parse(JSON.parse(raw));
    if (event.kind !== "proactive") continue;
    (out[event.source.name] ??= []).push(event.source.at);
  }
  return out;
}

beforeAll(async () => {
  db = await testRedis();
});

afterAll(async () => {
  for (const r of runtimes) await r.stop(0);
  await db.cleanup();
});

describe("a fire missed while nothing took jobs", () => {
  it("runs once when roomgate is back (missed: once) or is skipped (missed: skip); both go on", async () => {
    // `start` without workers: the schedules are made, nothing takes their fires.
    const down = await start({ workers: false, receivers: true });
    await new Promise((r) => setTimeout(r, 3 * PERIOD_MS + 500));
    expect(await queued()).toEqual({});
    await down.stop(0);
    const back = Date.now();
    await start({ workers: true, receivers: false });
    await new Promise((r) => setTimeout(r, 2 * PERIOD_MS + 1000));
    const fires = await queued();
    const late = (name: string) => (fires[name] ?? []).filter((at) => at < back - 1000);
    const onTime = (name: string) => (fires[name] ?? []).filter((at) => at >= back - 1000);
    // Three or more periods passed: one late fire, not one per period.
    expect(late("once-s")).toHaveLength(1);
    expect(late("skip-s")).toHaveLength(0);
    expect(onTime("once-s").length).toBeGreaterThanOrEqual(1);
    expect(onTime("skip-s").length).toBeGreaterThanOrEqual(1);
    expect(new Set(fires["once-s"]).size).toBe(fires["once-s"]!.length);
  });
});
