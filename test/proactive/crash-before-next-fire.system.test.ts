import { fileURLToPath, pathToFileURL } from "node:url";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { InboundEventSchema } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { PROACTIVE_QUEUE } from "../../src/proactive/proactive-queue.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

// A worker killed after it took a schedule's fire and before bullmq added the next one
// (test/support/die-before-next-fire.mjs kills it with SIGKILL at exactly that point).
// bullmq then restarts the schedule from "now" and never produces the periods between:
// while other workers run, each of them is still one turn; when everything is down
// after the crash, the periods of the outage are missed fires (`missed: once | skip`).

const PERIOD_MS = 2000;
const ROOM = "shell:crash";
const HOOK = pathToFileURL(fileURLToPath(new URL("../support/die-before-next-fire.mjs", import.meta.url)));
const runtimes: Runtime[] = [];
const processes: RoomgateProcess[] = [];
const dbs: TestRedis[] = [];
let standin: TelegramApiStandin;
let token: string;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  token = standin.addBot({ username: "crash_feed_bot" }).token;
});

afterAll(async () => {
  for (const p of processes) p.kill();
  for (const r of runtimes) await r.stop(0);
  for (const db of dbs) await db.cleanup();
  await standin.close();
});

function config(db: TestRedis, downSeconds: number, botToken = "${TELEGRAM_CRASH_TOKEN}") {
  const schedule = { room: ROOM, namespace: "feed", every: "2s", ask: "what should I read today?" };
  return {
    redis: { url: db.url, prefix: db.prefix },
    namespaces: demoNamespaces({}, ["feed"]).config.namespaces,
    // Something for the `worker` command to serve; the schedules post into a terminal room nobody serves.
    telegram: {
      apiRoot: standin.url,
      bots: [{ token: botToken, namespace: "feed", users: [1] }],
    },
    schedules: [
      { ...schedule, name: "once-s", missed: "once" },
      { ...schedule, name: "skip-s", missed: "skip" },
    ],
    proactive: { downSeconds },
  };
}

async function inProcess(db: TestRedis, downSeconds: number, workers: boolean): Promise<Runtime> {
  const runtime = await startRuntime({
    config: ConfigSchema.parse(config(db, downSeconds, token)),
    redisUrl: db.url,
    prefix: db.prefix,
    log: silentLogger(),
    platforms: [],
    workers,
    receivers: !workers,
  });
  runtimes.push(runtime);
  return runtime;
}

/** The fire times queued in the room, by schedule, sorted (nobody serves the terminal room here). */
async function queued(db: TestRedis): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const raw of await db.redis.lrange(db.schedulerKeys.inbox(ROOM), 0, -1)) {
    const event = InboundEventSchema.parse(JSON.parse(raw));
    if (event.kind === "proactive") (out[event.source.name] ??= []).push(event.source.at);
  }
  for (const times of Object.values(out)) times.sort((a, b) => a - b);
  return out;
}

/** Whether bullmq ever produced a job for this period (finished jobs are kept a day). */
async function produced(db: TestRedis, schedule: string, at: number): Promise<boolean> {
  return (await db.redis.exists(`${db.keys.bullmqPrefix}:jobs:repeat:cfg.${schedule}:${at}`)) === 1;
}

const NAMES = ["once-s", "skip-s"];

/** Whether each schedule has queued a fire at or after `at`. */
async function firedUntil(db: TestRedis, at: number): Promise<boolean> {
  const fires = await queued(db);
  return NAMES.every((name) => (fires[name]?.at(-1) ?? 0) >= at);
}

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

/**
 * A `worker` process that dies in the window, then the schedules made (so their first
 * fire is due while it runs): resolves with the fire it died holding.
 */
async function crashInTheWindow(db: TestRedis, downSeconds: number) {
  const doomed = RoomgateProcess.start(
    config(db, downSeconds),
    { NODE_OPTIONS: `--import ${HOOK.href}`, LOG_LEVEL: "info", TELEGRAM_CRASH_TOKEN: token },
    "worker",
  );
  processes.push(doomed);
  const died = new Promise<void>((resolve) => doomed.child.once("exit", () => resolve()));
  await waitFor(
    async () => (await db.redis.exists(db.keys.proactiveUptime)) === 1,
    60_000,
    "the worker",
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}: ${doomed.output}`);
  });
  // Its bullmq worker listens (bullmq names its connection; the queue counts those).
  const queue = new Queue(PROACTIVE_QUEUE, { connection: db.redis, prefix: db.keys.bullmqPrefix });
  try {
    await waitFor(async () => (await queue.getWorkersCount()) > 0, 60_000, "its bullmq worker listening");
  } finally {
    await queue.close();
  }
  const reconciler = await inProcess(db, downSeconds, false);
  await died;
  await reconciler.stop(0);
  const taken = /dying after taking repeat:cfg\.([\w-]+):(\d+)/.exec(doomed.output);
  expect(doomed.child.signalCode, doomed.output).toBe("SIGKILL");
  expect(taken, doomed.output).not.toBeNull();
  const name = taken![1]!;
  const at = Number(taken![2]);
  // The state the crash left: bullmq's scheduler still on the taken fire, no next job.
  expect(Number(await db.redis.zscore(`${db.keys.bullmqPrefix}:jobs:repeat`, `cfg.${name}`))).toBe(at);
  expect(await produced(db, name, at + PERIOD_MS)).toBe(false);
  return { name, at, diedAt: Date.now() };
}

describe.concurrent("a worker killed between taking a fire and bullmq adding the next", () => {
  it("while other workers run: every period is one turn, those bullmq never produced too", async () => {
    const db = await testRedis();
    dbs.push(db);
    const crash = await crashInTheWindow(db, 30);
    // Another worker runs on (as a supervisor restarts one); the run of workers goes on.
    await inProcess(db, 30, true);
    const until = crash.diedAt + 16_000;
    await waitFor(() => firedUntil(db, until), 60_000, "fires after the dead worker's lock ran out");
    const fires = await queued(db);
    expect(fires[crash.name]![0]).toBe(crash.at);
    for (const name of NAMES) {
      expect(new Set(gaps(fires[name]!)), `${name}: ${fires[name]!.join(", ")}`).toEqual(
        new Set([PERIOD_MS]),
      );
    }
    // bullmq went on from when the fire was taken back: the periods between were queued by us.
    const never = [];
    for (const at of fires[crash.name]!) if (!(await produced(db, crash.name, at))) never.push(at);
    expect(never.length).toBeGreaterThanOrEqual(2);
    expect(never[0]).toBe(crash.at + PERIOD_MS);
  }, 120_000);

  it("then everything down: the outage's periods are missed fires (once: one late, skip: none)", async () => {
    const db = await testRedis();
    dbs.push(db);
    const downSeconds = 3;
    const crash = await crashInTheWindow(db, downSeconds);
    await new Promise((r) => setTimeout(r, (downSeconds + 3) * 1000));
    expect(await queued(db)).toEqual({});
    await inProcess(db, downSeconds, true);
    const upSince = Number(await db.redis.get(db.keys.proactiveUptime));
    expect(upSince).toBeGreaterThan(crash.diedAt);
    // Past the taken-back fire (a stalled check or two) and a few periods more.
    const until = upSince + 12_000;
    await waitFor(() => firedUntil(db, until), 60_000, "fires after roomgate was back");
    const fires = await queued(db);
    const late = (name: string) => fires[name]!.filter((at) => at < upSince);
    const back = (name: string) => fires[name]!.filter((at) => at >= upSince);
    expect(late("once-s"), fires["once-s"]!.join(", ")).toHaveLength(1);
    expect(late("skip-s"), fires["skip-s"]!.join(", ")).toHaveLength(0);
    for (const name of NAMES) {
      // From the first period after roomgate was back, every period, the skipped ones too.
      expect(back(name)[0]! - upSince).toBeLessThanOrEqual(PERIOD_MS);
      expect(new Set(gaps(back(name))), `${name}: ${fires[name]!.join(", ")}`).toEqual(new Set([PERIOD_MS]));
    }
  }, 120_000);
});
