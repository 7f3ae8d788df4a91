import type { BotApiStandin } from "../support/bot-api-standin.js";
import type { FaultRedis } from "./topologies.js";
import type { RoomgateFleet } from "../support/roomgate-fleet.js";
import {
  clientPause,
  clusterFailover,
  failback,
  hungMaster,
  masterAndSentinelKill,
  misconf,
  outOfMemory,
  rangeDown,
  replicaStall,
  reshard,
  markPromoted,
  markWritable,
  type FaultMarks,
} from "./redis-faults.js";

/** The faults the script can inject, one per run. */
export const SCENARIOS = [
  "kill",
  "redis",
  "namespace",
  "poison",
  "429",
  "outage",
  "failover",
  "switchover",
  "master-kill",
  "hung-master",
  "master-sentinel-kill",
  "failback",
  "range-down",
  "range-down-other",
  "range-down-long",
  "cluster-failover",
  "reshard",
  "client-pause",
  "replica-stall",
  "oom",
  "misconf",
] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** What a scenario acts on while the load runs. */
export interface FaultTargets {
  fleet: RoomgateFleet;
  redis: FaultRedis;
  standin: BotApiStandin;
  /** Milliseconds the load is planned to last. */
  loadMs: number;
  /** The hash slot of the bot's send windows. */
  botRateSlot: number;
  log: (line: string) => void;
}

/** A running fault: `stop` ends it (killed members are back, the API is reachable). */
export interface RunningFault {
  /** Extra time the drain may take because of this fault (an outage's length). */
  extraDrainMs: number;
  /** When the fault began and when the topology took writes again by itself (a promotion). */
  marks: FaultMarks;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts one scenario's fault; it runs beside the load until `stop`. */
export function startFault(scenario: Scenario, t: FaultTargets): RunningFault {
  switch (scenario) {
    case "kill":
      return killWorkers(t);
    case "redis":
      return once(t, t.loadMs / 3, async () => {
        t.log("restarting redis-server (SIGTERM, 2 s down, same port and data)");
        await t.redis.single!.restart(2_000);
      });
    case "namespace":
    case "poison":
      // The crashing words ride in the messages themselves (`crashText`, bench/faults/poison.ts).
      return { extraDrainMs: 0, marks: {}, stop: async () => undefined };
    case "429":
      // On for the whole run, drain included: every attempt may meet one.
      t.standin.faults = { tooManyRatio: 0.3, retryAfter: [1, 3] };
      return { extraDrainMs: 0, marks: {}, stop: async () => undefined };
    case "failover":
      return once(t, t.loadMs / 3, async (marks) => {
        const cluster = t.redis.cluster!;
        const { node, keys } = await cluster.busiestMaster("rg:*");
        t.log(`kill -9 the cluster master holding most of roomgate's keys (${node.address}, ${keys} keys)`);
        const before = await cluster.identify(node);
        marks.faultAt = Date.now();
        await node.kill();
        const promoted = await cluster.failedOver(before);
        marks.promotedAt = Date.now();
        t.log(`${promoted.address} (its replica) was promoted; every slot is served again`);
        // As a supervisor would: the killed node comes back and rejoins as a replica.
        await node.start();
        await cluster.inSyncAsReplica(node);
        t.log(`${node.address} is back, a replica of the new master and in sync`);
      });
    case "switchover":
      return once(t, t.loadMs / 3, async (marks) => {
        const group = t.redis.sentinel!;
        const old = await group.master();
        t.log(`SENTINEL FAILOVER (master ${old.address})`);
        marks.faultAt = Date.now();
        await group.failover();
        const now = await group.promotedFrom(old);
        marks.promotedAt = Date.now();
        markWritable(now, marks);
        t.log(`${now.address} promoted`);
      });
    case "master-kill":
      return once(t, t.loadMs / 3, async (marks) => {
        const group = t.redis.sentinel!;
        const old = await group.master();
        t.log(`kill -9 the Sentinel-named master ${old.address}`);
        marks.faultAt = Date.now();
        await old.kill();
        const now = await group.promotedFrom(old);
        const stop = markPromoted(group, now, marks, t.log);
        t.log(`${now.address} promoted; the old master stays down for 10 s`);
        try {
          await sleep(10_000);
          await old.start();
          t.log(`${old.address} is back`);
        } finally {
          stop();
        }
      });
    case "hung-master":
      return once(t, t.loadMs / 3, (marks) => hungMaster(t.redis, marks, t.log));
    case "master-sentinel-kill":
      return once(t, t.loadMs / 3, (marks) => masterAndSentinelKill(t.redis, marks, t.log));
    case "failback":
      return once(t, t.loadMs / 4, (marks) => failback(t.redis, marks, t.log));
    case "range-down":
      return once(t, t.loadMs / 3, (marks) => rangeDown(t.redis, marks, t.log));
    case "range-down-other":
      // A range without the bot's send windows (rg:rate:{tg:<bot>}:*).
      return once(t, t.loadMs / 3, (marks) => rangeDown(t.redis, marks, t.log, t.botRateSlot));
    case "range-down-long": {
      // Down 80 s: long enough for group chats outside it to be served by the fallback
      // (a minute and a little after it went down: docs/reliability.md, Round 6).
      const fault = once(t, t.loadMs / 3, (marks) => rangeDown(t.redis, marks, t.log, undefined, 80_000));
      return { ...fault, extraDrainMs: 80_000 };
    }
    case "cluster-failover":
      return once(t, t.loadMs / 3, (marks) => clusterFailover(t.redis, marks, t.log));
    case "reshard":
      return once(t, t.loadMs / 4, (marks) => reshard(t.redis, marks, t.log));
    case "client-pause":
      return once(t, t.loadMs / 3, (marks) => clientPause(t.redis, marks, t.log));
    case "replica-stall":
      return once(t, t.loadMs / 3, (marks) => replicaStall(t.redis, marks, t.log));
    case "oom":
      return once(t, t.loadMs / 3, (marks) => outOfMemory(t.redis, marks, t.log));
    case "misconf":
      return once(t, t.loadMs / 3, (marks) => misconf(t.redis, marks, t.log));
    case "outage": {
      const fault = once(t, 5_000, async () => {
        t.log("Bot API unreachable for 60 s");
        await t.standin.unreachableFor(60_000);
        t.log("Bot API reachable again");
      });
      return { ...fault, extraDrainMs: 60_000 };
    }
  }
}

function once(t: FaultTargets, afterMs: number, act: (marks: FaultMarks) => Promise<void>): RunningFault {
  let done: Promise<void> = Promise.resolve();
  const marks: FaultMarks = {};
  const timer = setTimeout(() => {
    done = act(marks).catch((err: unknown) => t.log(`fault failed: ${String(err)}`));
  }, afterMs);
  return {
    extraDrainMs: 0,
    marks,
    stop: async () => {
      clearTimeout(timer);
      await done;
    },
  };
}

/**
 * kill -9 of a random running worker every 2–4 s, and of `start` once (the second
 * kill), each restarted a second later without waiting, so kills keep their pace.
 */
function killWorkers(t: FaultTargets): RunningFault {
  let stopped = false;
  let kills = 0;
  const restarts: Promise<unknown>[] = [];
  const loop = (async () => {
    while (!stopped) {
      await sleep(2_000 + Math.random() * 2_000);
      if (stopped) break;
      // Only members that are up: a kill during a restart would be no kill at all.
      const running = [...t.fleet.members.values()].filter((m) => m.ready);
      const workers = running.filter((m) => m.role === "worker");
      const member =
        kills === 1
          ? running.find((m) => m.role === "start")
          : workers[Math.floor(Math.random() * workers.length)];
      if (!member) continue;
      kills += 1;
      t.log(`kill -9 ${member.name} (pid ${member.child.pid})`);
      await t.fleet.kill(member.name);
      restarts.push(
        sleep(1_000)
          .then(() => t.fleet.launch(member.name, member.role, member.flags))
          .catch((err: unknown) => t.log(`restart of ${member.name} failed: ${String(err)}`)),
      );
    }
  })();
  return {
    extraDrainMs: 0,
    marks: {},
    stop: async () => {
      stopped = true;
      await loop;
      await Promise.all(restarts);
      t.log(`${kills} kills, start among them`);
    },
  };
}

/** The text of a message that crashes the namespace child the first time any child sees it. */
export function crashText(): string {
  return "crash-once";
}
