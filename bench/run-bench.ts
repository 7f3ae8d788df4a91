// npm run bench — roomgate against the floor (a bare grammY bot calling the same MCP
// echo tool inline) and against its peer (a grammY bot queueing each update on bullmq,
// served by a worker process), interleaved, against the same Bot API stand-in:
// open-loop rates and a burst, with default and raised limits, on one Redis and on a
// Redis Cluster of 3 masters; then each target with its figure. `--quick` for a short
// run, `--rounds N` to run the whole interleaved set N times (ratios within a round),
// `--peer` for issue 28's table alone (the bullmq peer, the default limits' backlog; 2 rounds).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { parseConfig } from "../src/core/config.js";
import { BULLMQ_ARM, startBullmq, startFloor, startRoomgate, type Arm, type ArmTarget } from "./arms.js";
import { formatTable } from "./bench-table.js";
import { formatTargets, targets } from "./bench-targets.js";
import { formatAcrossRounds, formatPeerTargets, PAIR_ARM, peerTargets, SPLIT_ARM } from "./peer-targets.js";
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
    rounds: { type: "string" },
    // Issue 28's targets alone, 2 rounds unless --rounds says otherwise: each workload with
    // only the arms its targets compare (about 8 minutes where the whole set twice takes about 28).
    peer: { type: "boolean", default: false },
    // Counts client round trips (redis-cli monitor) during each timed run, by command, for a
    // profile of one workload; MONITOR slows Redis down, so that run's timings do not compare.
    monitor: { type: "boolean", default: false },
  },
});
const ROUNDS = Math.max(1, Number(values.rounds ?? (values.peer ? 2 : 1)));
const quick = values.quick || values.smoke;
const CHATS = Array.from({ length: 100 }, (_, i) => 20_000 + i);
const seconds = quick ? 5 : 15;
type ArmKind =
  | "floor-polling"
  | "floor-runner"
  | "bullmq"
  | "roomgate"
  | "roomgate-raised"
  | "roomgate-pair"
  | "roomgate-split"
  | "roomgate-cluster";
/**
 * `--peer`: the arms each workload of issue 28's table needs: the default limits' pacing
 * and cost against the raised limits on the backlog every arm drains, and the peer
 * against start + 1 worker (and the one-process arm, for reference) at 200/s and in
 * the burst.
 */
const PEER_PLAN: Record<string, ArmKind[]> = {
  "600 at once": ["roomgate", "roomgate-raised"],
  "200/s": ["bullmq", "roomgate-raised", "roomgate-pair", "roomgate-split"],
  "20,000 at once": ["bullmq", "roomgate-raised", "roomgate-pair", "roomgate-split"],
  "2,000 at once": ["bullmq", "roomgate-raised", "roomgate-pair", "roomgate-split"],
};
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
  : ALL_WORKLOADS.filter(
      (w) =>
        (values.workload === undefined || w.name === values.workload) &&
        (!values.peer || PEER_PLAN[w.name] !== undefined),
    );

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

const ARMS: ArmKind[] = (
  values.smoke
    ? (["floor-polling", "bullmq", "roomgate", "roomgate-pair"] as const)
    : ([
        "floor-polling",
        "floor-runner",
        "bullmq",
        "roomgate",
        "roomgate-raised",
        "roomgate-pair",
        "roomgate-split",
        "roomgate-cluster",
      ] as const)
).filter(
  (kind) =>
    (values.arm === undefined || values.arm.includes(kind)) &&
    (!values.peer || Object.values(PEER_PLAN).some((arms) => arms.includes(kind))),
);

/** The arms that run `workload`: all, or under --peer those its targets compare. */
function armsOf(workload: Workload): ArmKind[] {
  const plan = values.peer ? PEER_PLAN[workload.name] : undefined;
  return plan ? ARMS.filter((kind) => plan.includes(kind)) : ARMS;
}

const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

cleanupOnExit();
const dir = mkdtempSync(join(tmpdir(), "roomgate-bench-"));
const redisProcess = await RedisServer.start({ dir: join(dir, "redis"), spawn: spawnTracked });
const redis = new Redis(redisProcess.url);
// Three masters, no replicas: the same work as the one instance, spread by the shards' hash tags.
// Started only when its arm runs (a cluster takes a while to form on a busy box).
const cluster = !ARMS.includes("roomgate-cluster")
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

/** The cluster arm's name (bench-targets.ts compares it with the one-instance arm). */
const CLUSTER_ARM = "roomgate, limits raised, 3 cluster masters";

async function start(kind: ArmKind, target: ArmTarget): Promise<Arm> {
  if (kind === "floor-polling") return startFloor("polling", target);
  if (kind === "floor-runner") return startFloor("runner", target);
  if (kind === "bullmq") return startBullmq(target);
  if (kind === "roomgate") return startRoomgate("roomgate, default limits", target, FLOOD_CONTROL_OFF);
  const raised = { ...FLOOD_CONTROL_OFF, ...(raisedOk ? RAISED : {}) };
  // The same number of processes as the bullmq peer's bot + worker.
  if (kind === "roomgate-pair") return startRoomgate(PAIR_ARM, target, raised, 1);
  if (kind === "roomgate-split") return startRoomgate(SPLIT_ARM, target, raised, 1, ["--receive-only"]);
  return startRoomgate(kind === "roomgate-cluster" ? CLUSTER_ARM : "roomgate, limits raised", target, raised);
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

/** Runs every workload on each arm in turn, so a slow minute of the shared box hits all arms alike. */
async function interleaved(round: number): Promise<Figures[]> {
  const figures: Figures[] = [];
  for (const workload of WORKLOADS) {
    for (const kind of armsOf(workload)) {
      await flushAll();
      const t = target(kind);
      const arm = await start(kind, t);
      try {
        log(`${ROUNDS > 1 ? `round ${round}, ` : ""}${workload.name}: ${arm.name}`);
        const servers = serversOf(kind);
        const run = () =>
          measure(arm, workload, {
            standin,
            token: t.token,
            chats: CHATS,
            redis: servers.clients,
            redisPids: servers.pids,
          });
        let f: Figures | undefined;
        if (values.monitor && arm.usesRedis) {
          const sendsBefore = standin.sends.filter((s) => s.token === t.token).length;
          const trips = await countRoundTrips(servers.urls, async () => void (f = await run()));
          const turns = standin.sends.filter((s) => s.token === t.token).length - sendsBefore;
          const breakdown = [...trips.byCommand]
            .sort((a, b) => b[1] - a[1])
            .map(([command, n]) => `${command} ${(n / turns).toFixed(2)}`);
          log(
            `  round trips per turn (MONITOR, warm-up included): ${(trips.total / turns).toFixed(2)}: ${breakdown.join(", ")}`,
          );
        } else {
          f = await run();
        }
        if (!f) throw new Error("no figures");
        figures.push(f);
        log(
          `  delivered ${f.delivered}/${f.offered}, p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, ${f.msgsPerSecond.toFixed(0)} msgs/s, CPU ${f.cpuMsPerTurn.toFixed(2)} ms/turn, ${f.redisCommandsPerTurn.toFixed(1)} Redis cmds/turn`,
        );
      } finally {
        await arm.stop();
      }
    }
  }
  return figures;
}

/** Client round trips per turn of each arm that uses Redis, from MONITOR at 20 turns/s, with a line by command. */
async function roundTripsPerTurn(): Promise<{ perTurn: Map<string, number>; lines: string[] }> {
  const perTurn = new Map<string, number>();
  const lines: string[] = [];
  for (const kind of ARMS.filter((k) => k.startsWith("roomgate") || k === "bullmq")) {
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
      perTurn.set(arm.name, trips.total / turns);
      const breakdown = [...trips.byCommand]
        .sort((a, b) => b[1] - a[1])
        .map(([command, n]) => `${command} ${(n / turns).toFixed(2)}`);
      lines.push(`${arm.name}: ${breakdown.join(", ")}`);
    } finally {
      await arm.stop();
    }
  }
  return { perTurn, lines };
}

/** Redis commands per delivered turn by name for the arms of `workload` that use Redis. */
function commandBreakdown(figures: Figures[], workload: string): string {
  return figures
    .filter((f) => f.workload === workload && (f.arm.startsWith("roomgate") || f.arm === BULLMQ_ARM))
    .map((f) => {
      const top = [...f.redisCommands]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 16)
        .map(([name, n]) => `${name} ${(n / Math.max(1, f.delivered)).toFixed(1)}`);
      return `${f.arm}: ${top.join(", ")}`;
    })
    .join("\n");
}

try {
  log(
    `roomgate bench${values.smoke ? " --smoke" : quick ? " --quick" : ""}${values.peer ? " --peer" : ""}: 100 chats, workloads ${WORKLOADS.map((w) => w.name).join(", ")}, arms ${ARMS.join(", ")}${ROUNDS > 1 ? `, ${ROUNDS} rounds` : ""}`,
  );
  if (!raisedOk)
    log("this build's config has no telegram.limits: the 'limits raised' arm runs with default limits");
  const rounds: Figures[][] = [];
  for (let round = 1; round <= ROUNDS; round += 1) rounds.push(await interleaved(round));
  // Round trips are counted in a run of their own: MONITOR slows Redis down, so it stays out of the timed runs.
  const trips = await roundTripsPerTurn();
  rounds.forEach((figures, i) => {
    if (ROUNDS > 1) console.log(`\n## Round ${i + 1}\n`);
    console.log(formatTable(figures, trips.perTurn));
    for (const workload of ["600 at once", "2,000 at once", "20,000 at once"]) {
      const breakdown = commandBreakdown(figures, workload);
      if (breakdown)
        console.log(
          `\nRedis commands per delivered turn by command, ${workload} (INFO commandstats, script-internal included):\n${breakdown}`,
        );
    }
    console.log(`\nTargets (issue 13):\n${formatTargets(figures, { clusterArm: CLUSTER_ARM })}`);
    const peer = formatPeerTargets(figures);
    if (peer) console.log(`\nTargets against the bullmq peer (issue 28):\n${peer}`);
  });
  // Issue 28's table over every round: the peer targets and the default limits' (nothing worse).
  const issue28 = rounds.map((figures) => [
    ...peerTargets(figures),
    ...targets(figures, { clusterArm: CLUSTER_ARM }).filter((l) => /default limits/.test(l.what)),
  ]);
  if (issue28.some((lines) => lines.length > 0))
    console.log(`\nIssue 28's targets over ${ROUNDS} round(s):\n${formatAcrossRounds(issue28)}`);
  console.log(`\nRedis round trips per turn by command (MONITOR, 20 turns/s):\n${trips.lines.join("\n")}`);
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
