import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RedisServer } from "../../src/sessions/redis-server.js";
import type { RedisSentinelTopology } from "../support/redis-topology.js";
import type { FaultRedis } from "./topologies.js";

/**
 * When a fault began, when the topology named a new master (or the fault ended), and
 * when that master took a write (a promoted master with min-replicas-to-write refuses
 * writes until a replica follows it), local ms.
 */
export interface FaultMarks {
  faultAt?: number;
  promotedAt?: number;
  writableAt?: number;
  /**
   * Failovers the sentinels made after the first one (they may call a master they have
   * just promoted down and promote another): the marks are of the last.
   */
  laterPromotions?: number;
  /** The slot ranges that were down (range-down), as CLUSTER NODES lists them. */
  downSlots?: string[];
}

type Log = (line: string) => void;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${ms} ms`);
    await sleep(100);
  }
}

/**
 * Marks when the Sentinel-named master `node` takes a write (a key outside roomgate's
 * prefix; a Cluster node would answer MOVED for it), trying every 100 ms.
 */
export function markWritable(node: RedisServer, marks: FaultMarks): void {
  const promotedAt = marks.promotedAt;
  void until(`${node.address} taking writes`, 120_000, async () => {
    await send(node, ["SET", "fault-probe", String(Date.now())]);
    return true;
  }).then(
    // Not a master promoted before the one the marks are of now.
    () => marks.promotedAt === promotedAt && (marks.writableAt = Date.now()),
    () => undefined,
  );
}

/**
 * Marks the promotion of `now` and, until the returned stop, of every master the
 * sentinels switch to after it: on a loaded box they may call the master they have
 * just promoted down a second later and fail over again (seen in a test run beside
 * CI: all three sentinels had the new master `+sdown` 1.02 s after `+switch-master`),
 * and the stall is then bounded by the promotion of the master they settled on.
 */
export function markPromoted(
  group: RedisSentinelTopology,
  now: RedisServer,
  marks: FaultMarks,
  log: Log,
): () => void {
  marks.promotedAt = Date.now();
  markWritable(now, marks);
  return group.watchSwitches(now, (next) => {
    marks.promotedAt = Date.now();
    marks.writableAt = undefined;
    marks.laterPromotions = (marks.laterPromotions ?? 0) + 1;
    markWritable(next, marks);
    const after = ((marks.promotedAt - (marks.faultAt ?? marks.promotedAt)) / 1000).toFixed(1);
    log(`the sentinels failed over again, to ${next.address}, ${after} s after the fault`);
  });
}

/** Sends one command to one node as it is. */
async function send(node: RedisServer, args: (string | number)[]): Promise<unknown> {
  const client = node.client();
  try {
    return await client.call(String(args[0]), ...args.slice(1));
  } finally {
    client.disconnect();
  }
}

async function info(node: RedisServer, section: string): Promise<string> {
  return String(await send(node, ["INFO", section]));
}

/** The nodes taking writes now: the one instance, the Sentinel-named master, every Cluster master. */
async function writableMasters(redis: FaultRedis): Promise<RedisServer[]> {
  if (redis.single) return [redis.single];
  if (redis.sentinel) return [await redis.sentinel.master()];
  return redis.cluster!.masters();
}

/** The nodes replicating the master that holds most of roomgate's keys. */
async function busyReplicas(redis: FaultRedis): Promise<RedisServer[]> {
  if (redis.sentinel) {
    const master = await redis.sentinel.master();
    return redis.sentinel.data.filter((n) => n !== master && n.running);
  }
  if (redis.cluster) {
    const { node } = await redis.cluster.busiestMaster("rg:*");
    const { id } = await redis.cluster.identify(node);
    return [await redis.cluster.replicaOf(id)];
  }
  return [];
}

/** SIGSTOP, then SIGCONT `ms` later: the process keeps its sockets open and answers nothing. */
async function freeze(node: RedisServer, ms: number): Promise<void> {
  process.kill(node.pid!, "SIGSTOP");
  try {
    await sleep(ms);
  } finally {
    process.kill(node.pid!, "SIGCONT");
  }
}

/** Sentinel: the master hangs (SIGSTOP) for 40 s, the case ioredis' failoverDetector exists for. */
export async function hungMaster(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const group = redis.sentinel!;
  const old = await group.master();
  log(`SIGSTOP the Sentinel-named master ${old.address} for 40 s`);
  marks.faultAt = Date.now();
  const hang = freeze(old, 40_000);
  const now = await group.promotedFrom(old);
  const stop = markPromoted(group, now, marks, log);
  log(`${now.address} promoted ${((marks.promotedAt! - marks.faultAt) / 1000).toFixed(1)} s after the hang`);
  try {
    await hang;
    log(`${old.address} goes on (SIGCONT)`);
    await group.inSync(old);
    log(`${old.address} is a replica of the new master and in sync`);
  } finally {
    stop();
  }
}

/** Sentinel: the master and one sentinel are killed together; both come back 10 s after the promotion. */
export async function masterAndSentinelKill(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const group = redis.sentinel!;
  const old = await group.master();
  const sentinel = group.sentinels[0]!;
  log(`kill -9 the master ${old.address} and the sentinel ${sentinel.address}`);
  marks.faultAt = Date.now();
  await Promise.all([old.kill(), sentinel.kill()]);
  const now = await group.promotedFrom(old);
  const stop = markPromoted(group, now, marks, log);
  log(`${now.address} promoted ${((marks.promotedAt! - marks.faultAt) / 1000).toFixed(1)} s after the kill`);
  try {
    await sleep(10_000);
    await Promise.all([old.start(), sentinel.start()]);
    log(`${old.address} and the sentinel are back`);
  } finally {
    stop();
  }
}

/**
 * Sentinel: a switchover, and once the old master follows the new one in sync, a
 * switchover back to it (the third node made ineligible meanwhile, so the sentinels
 * choose the old master).
 */
export async function failback(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const group = redis.sentinel!;
  const old = await group.master();
  log(`SENTINEL FAILOVER (master ${old.address})`);
  marks.faultAt = Date.now();
  await group.failover();
  const now = await group.promotedFrom(old);
  marks.promotedAt = Date.now();
  markWritable(now, marks);
  log(`${now.address} promoted; waiting for ${old.address} to follow it in sync`);
  await group.inSync(old);
  const others = group.data.filter((n) => n !== old && n !== now);
  for (const n of others) await send(n, ["CONFIG", "SET", "replica-priority", "0"]);
  // The sentinels read a replica's priority from its INFO, every 10 s.
  await until("the sentinels seeing the other replicas ineligible", 30_000, async () => {
    const seen = await group.replicasSeen();
    return seen.every((replicas) =>
      others.every((n) => replicas.some((r) => Number(r.port) === n.port && r["slave-priority"] === "0")),
    );
  });
  // The sentinels refuse a failover while the last one's timeout runs; asked again until taken.
  await until("a failover back accepted", 60_000, async () => {
    await group.failover();
    return true;
  });
  log(`SENTINEL FAILOVER back to ${old.address}`);
  await until(`${old.address} master again`, 60_000, async () => (await group.master()) === old);
  for (const n of others) await send(n, ["CONFIG", "SET", "replica-priority", "100"]);
  log(`${old.address} is the master again`);
}

/**
 * Cluster: a master and its only replica killed; that slot range is down for 15 s. The
 * busiest master, or with `sparing` the first master whose range does not hold that
 * slot (the bot's send windows), so that both cases can be run.
 */
export async function rangeDown(
  redis: FaultRedis,
  marks: FaultMarks,
  log: Log,
  sparing?: number,
  downMs = 15_000,
): Promise<void> {
  const cluster = redis.cluster!;
  let node = (await cluster.busiestMaster("rg:*")).node;
  if (sparing !== undefined) {
    for (const m of await cluster.masters()) {
      const { slots } = await cluster.identify(m);
      const holds = slots.some((r) => {
        const [from, to] = r.split("-").map(Number);
        return sparing >= from! && sparing <= (to ?? from!);
      });
      if (!holds) {
        node = m;
        break;
      }
    }
  }
  const { id, slots } = await cluster.identify(node);
  const replica = await cluster.replicaOf(id);
  log(
    `kill -9 the master ${node.address} (slots ${slots.join(" ")}) and its only replica ${replica.address}; back in ${downMs / 1000} s`,
  );
  marks.downSlots = slots;
  marks.faultAt = Date.now();
  await Promise.all([node.kill(), replica.kill()]);
  await sleep(downMs);
  await node.start();
  await replica.start();
  await cluster.allOk();
  marks.promotedAt = Date.now();
  log(`${node.address} serves its range again (${((marks.promotedAt - marks.faultAt) / 1000).toFixed(1)} s)`);
}

/**
 * Cluster: online resharding under load — a 4th master joins empty and a quarter of the
 * slots move onto it (`redis-cli --cluster rebalance --cluster-use-empty-masters`), so
 * scripts meet ASK, TRYAGAIN and MOVED mid-turn.
 */
export async function reshard(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const cluster = redis.cluster!;
  marks.faultAt = Date.now();
  const node = await cluster.addMaster();
  log(`${node.address} joined as an empty master; rebalancing slots onto it`);
  const moved = await cluster.rebalance();
  marks.promotedAt = Date.now();
  log(`${moved} slots moved (${((marks.promotedAt - marks.faultAt) / 1000).toFixed(1)} s)`);
}

/** Cluster: the busiest master's replica takes over by CLUSTER FAILOVER (an operator's switchover). */
export async function clusterFailover(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const cluster = redis.cluster!;
  const { node } = await cluster.busiestMaster("rg:*");
  const { id } = await cluster.identify(node);
  const replica = await cluster.replicaOf(id);
  log(`CLUSTER FAILOVER on ${replica.address} (replica of ${node.address})`);
  marks.faultAt = Date.now();
  await send(replica, ["CLUSTER", "FAILOVER"]);
  await until(`${replica.address} a master`, 30_000, async () =>
    (await info(replica, "replication")).includes("role:master"),
  );
  marks.promotedAt = Date.now();
  log(`${replica.address} promoted ${((marks.promotedAt - marks.faultAt) / 1000).toFixed(1)} s after`);
  await cluster.inSyncAsReplica(node);
}

/** Any topology: every master refuses writes for 10 s (CLIENT PAUSE 10000 WRITE). */
export async function clientPause(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const masters = await writableMasters(redis);
  log(`CLIENT PAUSE 10000 WRITE on ${masters.map((m) => m.address).join(", ")}`);
  marks.faultAt = Date.now();
  await Promise.all(masters.map((m) => send(m, ["CLIENT", "PAUSE", 10_000, "WRITE"])));
  await sleep(10_000);
  marks.promotedAt = Date.now();
}

/** Sentinel or Cluster: the replicas of the busiest master stop (SIGSTOP) for 8 s, so WAIT times out. */
export async function replicaStall(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const replicas = await busyReplicas(redis);
  log(`SIGSTOP the replicas ${replicas.map((r) => r.address).join(", ")} for 8 s (WAIT times out)`);
  marks.faultAt = Date.now();
  await Promise.all(replicas.map((r) => freeze(r, 8_000)));
  marks.promotedAt = Date.now();
  log("the replicas go on (SIGCONT)");
}

/** Any topology: every master at its maxmemory with noeviction for 10 s (`OOM command not allowed`). */
export async function outOfMemory(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const masters = await writableMasters(redis);
  log(`maxmemory 1 byte, noeviction, on ${masters.map((m) => m.address).join(", ")} for 10 s`);
  marks.faultAt = Date.now();
  await Promise.all(
    masters.map((m) => send(m, ["CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "1"])),
  );
  await sleep(10_000);
  await Promise.all(masters.map((m) => send(m, ["CONFIG", "SET", "maxmemory", "0"])));
  marks.promotedAt = Date.now();
  log("maxmemory lifted");
}

/**
 * Any topology: a snapshot that cannot be written makes every master answer writes with
 * MISCONF for 10 s (stop-writes-on-bgsave-error): its file name (dbfilename, a protected
 * setting) is taken by a directory, so the snapshot's rename fails, whoever runs Redis.
 */
export async function misconf(redis: FaultRedis, marks: FaultMarks, log: Log): Promise<void> {
  const masters = await writableMasters(redis);
  log(`a failed snapshot (MISCONF) on ${masters.map((m) => m.address).join(", ")} for 10 s`);
  const blocked: string[] = [];
  marks.faultAt = Date.now();
  for (const m of masters) {
    const [, dir] = (await send(m, ["CONFIG", "GET", "dir"])) as [string, string];
    const [, file] = (await send(m, ["CONFIG", "GET", "dbfilename"])) as [string, string];
    const path = join(dir, file);
    if (existsSync(path)) renameSync(path, `${path}.aside`);
    mkdirSync(join(path, "taken"), { recursive: true });
    blocked.push(path);
    await send(m, ["CONFIG", "SET", "save", "3600 1"]);
    await send(m, ["BGSAVE"]);
    await until(`${m.address} failing its snapshot`, 10_000, async () =>
      (await info(m, "persistence")).includes("rdb_last_bgsave_status:err"),
    );
  }
  await sleep(10_000);
  for (const path of blocked) {
    rmSync(path, { recursive: true, force: true });
    if (existsSync(`${path}.aside`)) renameSync(`${path}.aside`, path);
  }
  for (const m of masters) {
    await until(`${m.address} saving again`, 20_000, async () => {
      if ((await info(m, "persistence")).includes("rdb_last_bgsave_status:ok")) return true;
      await send(m, ["BGSAVE"]).catch(() => undefined);
      return false;
    });
    await send(m, ["CONFIG", "SET", "save", ""]);
  }
  marks.promotedAt = Date.now();
  log("snapshots written again; writes accepted");
}
