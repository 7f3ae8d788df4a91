// npm run bench — roomgate against the floor (a bare grammY bot calling the same MCP
// echo tool inline), interleaved, against the same Bot API stand-in: open-loop
// rates and a burst, with default and raised limits, on one Redis and on a Redis
// Cluster of 3 masters; then each target with its figure. `--quick` for a short run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { parseConfig } from "../src/core/config.js";
import { startFloor, startRoomgate, type Arm, type ArmTarget } from "./arms.js";
import { formatTable } from "./bench-table.js";
import { formatTargets } from "./bench-targets.js";
import { countRoundTrips } from "./redis-counters.js";
import { BotApiStandin } from "./support/bot-api-standin.js";
import { cleanupOnExit, killAll, spawnTracked } from "./support/processes.js";
import { RedisServer } from "../src/sessions/redis-server.js";
import { RedisClusterTopology } from "./support/redis-topology.js";
import { toolSearchP99Micros } from "./tool-search-bench.js";
import { measure, plan, type Figures, type Workload } from "./workloads.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    smoke: { type: "boolean", default: false },
    // One workload by name (e.g. --workload "600 at once"), to look at one closely.
    workload: { type: "string" },
    // Only these arms (repeatable: --arm roomgate-raised --arm floor-runner), to profile one.
    arm: { type: "string", multiple: true },
  },
});
const quick = values.quick || values.smoke;
const CHATS = Array.from({ length: 100 }, (_, i) => 20_000 + i);
const seconds = quick ? 5 : 15;
const ALL_WORKLOADS: Workload[] = [
  // A backlog every arm drains (at the default limits in about 20 s): what the default
  // limits cost per delivered turn against the raised ones is read here, every message
  // enqueued and answered inside the window.
  { name: "600 at once", rate: Infinity, messages: 600, drainMs: 40_000 },
  { name: "50/s", rate: 50, messages: 50 * seconds, drainMs: quick ? 10_000 : 30_000 },
  { name: "200/s", rate: 200, messages: 200 * seconds, drainMs: quick ? 10_000 : 30_000 },
  {
    name: quick ? "2,000 at once" : "20,000 at once",
    rate: Infinity,
    messages: quick ? 2_000 : 20_000,
    drainMs: quick ? 20_000 : 60_000,
  },
];
const WORKLOADS: Workload[] = values.smoke
  ? [{ name: "50/s", rate: 50, messages: 100, drainMs: 10_000 }]
  : ALL_WORKLOADS.filter((w) => values.workload === undefined || w.name === values.workload);

/**
 * Raised limits for a self-hosted Bot API: the config key the scheduler reads. A
 * build whose config does not know it yet runs that arm with a note instead.
 */
const RAISED: Record<string, unknown> = {
  telegram: { limits: { botPerSecond: 1_000_000, chatPerSecond: 1_000_000, groupPerMinute: 1_000_000 } },
};

/**
 * Both roomgate arms: the flood controls for one person and one room's queue are
 * off, since 100 chats at 200/s (or 200 messages each at once) are the load itself.
 */
const FLOOD_CONTROL_OFF: Record<string, unknown> = {
  limits: { turnsPerMinute: 1_000_000, roomQueueCap: 1_000_000 },
};

/** True when this build's config keeps the raised limits (an unknown key would be dropped or refused). */
function raisedConfigAccepted(): boolean {
  try {
    const raised = RAISED.telegram as Record<string, unknown>;
    const config = parseConfig(
      JSON.stringify({
        namespaces: { echo: { command: ["x"] } },
        telegram: { ...raised, bots: [{ token: "1:a", namespace: "echo" }] },
      }),
      {},
    );
    return (config.telegram as Record<string, unknown> | undefined)?.limits !== undefined;
  } catch {
    return false;
  }
}

const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

cleanupOnExit();
const dir = mkdtempSync(join(tmpdir(), "roomgate-bench-"));
const redisProcess = await RedisServer.start({ dir: join(dir, "redis"), spawn: spawnTracked });
const redis = new Redis(redisProcess.url);
// Three masters, no replicas: the same work as the one instance, spread by the shards' hash tags.
const cluster = values.smoke
  ? undefined
  : await RedisClusterTopology.start({
      dir: join(dir, "cluster"),
      masters: 3,
      replicas: 0,
      spawn: spawnTracked,
    });
const clusterClients = cluster ? cluster.nodes.map((n) => new Redis(n.url)) : [];
const standin = await BotApiStandin.start();
const raisedOk = raisedConfigAccepted();
let botId = 8_200_000_000;

type ArmKind = "floor-polling" | "floor-runner" | "roomgate" | "roomgate-raised" | "roomgate-cluster";
const ARMS: ArmKind[] = (
  values.smoke
    ? (["floor-polling", "roomgate"] as const)
    : (["floor-polling", "floor-runner", "roomgate", "roomgate-raised", "roomgate-cluster"] as const)
).filter((kind) => values.arm === undefined || values.arm.includes(kind));

/** The cluster arm's name (bench-targets.ts compares it with the one-instance arm). */
const CLUSTER_ARM = "roomgate, limits raised, 3 cluster masters";

async function start(kind: ArmKind, target: ArmTarget): Promise<Arm> {
  if (kind === "floor-polling") return startFloor("polling", target);
  if (kind === "floor-runner") return startFloor("runner", target);
  if (kind === "roomgate") return startRoomgate("roomgate, default limits", target, FLOOD_CONTROL_OFF);
  return startRoomgate(kind === "roomgate-cluster" ? CLUSTER_ARM : "roomgate, limits raised", target, {
    ...FLOOD_CONTROL_OFF,
    ...(raisedOk ? RAISED : {}),
  });
}

function target(kind: ArmKind): ArmTarget {
  botId += 1;
  return {
    apiRoot: standin.url,
    token: standin.addBot(botId, `bench${botId}`),
    chats: CHATS,
    redisUrl: redisProcess.url,
    ...(kind === "roomgate-cluster" && cluster ? { clusterNodes: cluster.urls } : {}),
    dir,
  };
}

/** The Redis servers an arm uses: clients (flushed before it, counted after) and process ids. */
function serversOf(kind: ArmKind): { clients: Redis[]; pids: number[]; urls: string[] } {
  if (kind === "roomgate-cluster" && cluster)
    return { clients: clusterClients, pids: cluster.nodes.map((n) => n.pid!), urls: cluster.urls };
  return { clients: [redis], pids: [redisProcess.pid!], urls: [redisProcess.url] };
}

/** Empties every server, so an arm starts on a Redis with nothing of the one before. */
async function flushAll(): Promise<void> {
  await Promise.all([redis, ...clusterClients].map((c) => c.flushall()));
}

const figures: Figures[] = [];
const roundTrips = new Map<string, number>();
const tripLines: string[] = [];
try {
  log(
    `roomgate bench${values.smoke ? " --smoke" : quick ? " --quick" : ""}: 100 chats, workloads ${WORKLOADS.map((w) => w.name).join(", ")}`,
  );
  if (!raisedOk)
    log("this build's config has no telegram.limits: the 'limits raised' arm runs with default limits");
  // Interleaved: every workload runs each arm in turn, so a slow minute of the shared box hits all arms alike.
  for (const workload of WORKLOADS) {
    for (const kind of ARMS) {
      await flushAll();
      const t = target(kind);
      const arm = await start(kind, t);
      try {
        log(`${workload.name}: ${arm.name}`);
        const servers = serversOf(kind);
        const f = await measure(arm, workload, {
          standin,
          token: t.token,
          chats: CHATS,
          redis: servers.clients,
          redisPids: servers.pids,
        });
        figures.push(f);
        log(
          `  delivered ${f.delivered}/${f.offered}, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, ${f.msgsPerSecond.toFixed(0)} msgs/s`,
        );
      } finally {
        await arm.stop();
      }
    }
  }
  // Round trips are counted in a run of their own: MONITOR slows Redis down, so it stays out of the timed runs.
  for (const kind of ARMS.filter((k) => k.startsWith("roomgate"))) {
    await flushAll();
    const t = target(kind);
    const arm = await start(kind, t);
    try {
      const sample = plan(
        { name: "sample", rate: 20, messages: values.smoke ? 40 : 200, drainMs: 0 },
        CHATS,
        performance.now() + 500,
      );
      const trips = await countRoundTrips(serversOf(kind).urls, async () => {
        standin.schedule(t.token, sample, (chat) => chat);
        const deadline = performance.now() + 60_000;
        while (
          standin.sends.filter((s) => s.token === t.token).length < sample.length &&
          performance.now() < deadline
        ) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      });
      const turns = standin.sends.filter((s) => s.token === t.token).length;
      roundTrips.set(arm.name, trips.total / turns);
      const breakdown = [...trips.byCommand]
        .sort((a, b) => b[1] - a[1])
        .map(([command, n]) => `${command} ${(n / turns).toFixed(2)}`);
      tripLines.push(`${arm.name}: ${breakdown.join(", ")}`);
    } finally {
      await arm.stop();
    }
  }
  console.log(formatTable(figures, roundTrips));
  console.log(`\nRedis round trips per turn by command (MONITOR, 20 turns/s):\n${tripLines.join("\n")}`);
  const backlog = figures.filter((f) => f.workload === "600 at once" && f.arm.startsWith("roomgate"));
  if (backlog.length > 0)
    console.log(
      `\nRedis commands per delivered turn by command, 600 at once (INFO commandstats, script-internal included):\n${backlog
        .map((f) => {
          const top = [...f.redisCommands]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 14)
            .map(([name, n]) => `${name} ${(n / Math.max(1, f.delivered)).toFixed(1)}`);
          return `${f.arm}: ${top.join(", ")}`;
        })
        .join("\n")}`,
    );
  console.log(`\nTargets (issue 13):\n${formatTargets(figures, { clusterArm: CLUSTER_ARM })}`);
  const search = await toolSearchP99Micros().catch(() => undefined);
  if (search)
    console.log(
      `\n/tools words over 500 tools: p50 ${search.p50.toFixed(0)} µs, p99 ${search.p99.toFixed(0)} µs`,
    );
  if (!raisedOk)
    console.log(
      "\nnote: 'limits raised' ran with default limits (this build's config has no telegram.limits)",
    );
} finally {
  redis.disconnect();
  clusterClients.forEach((c) => c.disconnect());
  await standin.close();
  await redisProcess.stop();
  await cluster?.stop();
  killAll();
  if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
