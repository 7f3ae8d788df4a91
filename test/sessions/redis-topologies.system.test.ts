import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { describe, expect, it } from "vitest";
import type { RedisClusterTopology } from "../../bench/support/redis-topology.js";
import { silentLogger } from "../../src/core/log.js";
import { AuditLog } from "../../src/sessions/audit-log.js";
import { PairingCodes } from "../../src/sessions/pairing-codes.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import type { RedisServer } from "../../src/sessions/redis-server.js";
import { checkRedisPersistence } from "../../src/sessions/redis-persistence.js";
import type { TelegramApiStandin, StandinBot } from "../support/telegram-api-standin.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { clusterRuntime, sentinelRuntime, type TopologyRuntimeOptions } from "../support/topology-runtime.js";
import { waitFor } from "../support/wait.js";

/**
 * The short topology check `npm test` runs (the long runs are `npm run test:faults --
 * --topology cluster|sentinel`): roomgate answers every message exactly once on
 * a real Redis Cluster and behind a real Sentinel group, through a SENTINEL FAILOVER.
 */
const CHATS = 24;
const users = Array.from({ length: CHATS }, (_, i) => 8000 + i);

/** Every chat a user of the bot; limits raised: these tests check what is sent, not its pace. */
const options = (name: string): TopologyRuntimeOptions => ({
  name,
  bot: { users },
  sendLimits: { botPerSecond: 1000, chatPerSecond: 100, groupPerMinute: 1000 },
});

/** Sends messages `from`..`to` to every chat; each must be answered exactly once. */
async function talk(standin: TelegramApiStandin, bot: StandinBot, from: number, to: number): Promise<void> {
  for (let n = from; n < to; n += 1)
    for (const id of users)
      standin.userSends(bot.token, { from: { id, first_name: "U" }, text: `what should I read today? ${n}` });
  await waitFor(
    () => users.every((id) => standin.botMessages(bot.token, id).length >= to),
    40_000,
    "answers",
  );
  for (const id of users) expect(standin.botMessages(bot.token, id)).toHaveLength(to);
}

/** The replica of the master that serves `key`'s slot (CLUSTER NODES). */
async function replicaOfKey(cluster: RedisClusterTopology, key: string): Promise<RedisServer> {
  const any = cluster.nodes[0]!.client();
  const slot = Number(await any.call("CLUSTER", "KEYSLOT", key));
  const lines = String(await any.call("CLUSTER", "NODES"))
    .trim()
    .split("\n")
    .map((l) => l.trim().split(" "));
  any.disconnect();
  const covers = (range: string) => {
    const [from, to = from] = range.split("-").map(Number);
    return slot >= from! && slot <= to!;
  };
  const master = lines.find((f) => /master/.test(f[2]!) && f.slice(8).some(covers))!;
  const replica = lines.find((f) => /slave/.test(f[2]!) && f[3] === master[0])!;
  const address = replica[1]!.split("@")[0]!;
  return cluster.nodes.find((n) => n.address === address)!;
}

describe("on a Redis Cluster (3 masters, 3 replicas)", () => {
  const world = clusterRuntime(options("rg-cluster"));

  it("answers every message once, with the rooms spread over every master and writes waiting for a replica", async () => {
    const { topology: cluster, connection, standin, bot } = world;
    expect(connection.waitReplicas).toBe(1);
    await talk(standin, bot, 0, 3);
    const masters = await cluster.masters();
    const perMaster = await Promise.all(
      masters.map(async (m) => {
        const c = m.client();
        const n = (await c.scan("0", "MATCH", "rg:{*}:room:*:session", "COUNT", 10_000))[1].length;
        c.disconnect();
        return n;
      }),
    );
    expect(perMaster.filter((n) => n > 0)).toHaveLength(3);
  }, 60_000);

  it("pairs a stranger with a one-time code and keeps the audit trail, each in its one slot", async () => {
    const { connection, standin, bot, runtime } = world;
    const stranger = { id: 9900, first_name: "New" };
    const { code } = await new PairingCodes(connection.client, runtime.deps.keys).create(
      `telegram:${bot.id}`,
      "operator:test",
    );
    standin.userSends(bot.token, { from: stranger, text: `/pair ${code}` });
    await waitFor(() => standin.botMessages(bot.token, stranger.id).length === 1, 20_000, "the pairing");
    expect(standin.botMessages(bot.token, stranger.id)[0]!.text).toContain("Paired");
    standin.userSends(bot.token, { from: stranger, text: "what should I read today?" });
    await waitFor(() => standin.botMessages(bot.token, stranger.id).length === 2, 20_000, "the answer");
    expect(standin.botMessages(bot.token, stranger.id)[1]!.text).not.toContain("not allowed");
    const trail = new AuditLog(connection.client, runtime.deps.keys, 3600_000);
    const at = Date.now();
    const base = { binding: "b", requester: "tg:1", tool: "t" };
    await trail.opened(
      "x",
      { ...base, type: "approval.requested", at },
      { ...base, type: "approval.expired", at },
      at,
    );
    expect(await trail.sweep(at + 1)).toBe(1);
    const types = [];
    for await (const e of trail.since(0)) types.push(e.type);
    expect(types).toEqual(["pairing.added", "approval.requested", "approval.expired"]);
  });

  it("hands out a send slot only once the replica of the bot's windows has it", async () => {
    const { topology: cluster, runtime } = world;
    // A slot handed out before its replica has it is lost when the master dies right
    // after the send: the promoted replica would let a 31st send into that second.
    const windows = [{ group: "slot-check", scope: "bot", max: 30, windowMs: 1000 }];
    const replica = await replicaOfKey(
      cluster,
      new SchedulerKeys(runtime.deps.keys.prefix).rate("slot-check", "bot"),
    );
    process.kill(replica.pid!, "SIGSTOP");
    let granted = false;
    let booking: Promise<unknown>;
    try {
      booking = runtime.deps.limiter.book(windows, "check", 20).then(() => (granted = true));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(granted).toBe(false);
    } finally {
      process.kill(replica.pid!, "SIGCONT");
    }
    await booking;
    const direct = replica.client();
    await direct.readonly();
    expect(
      await direct.zscore(new SchedulerKeys(runtime.deps.keys.prefix).rate("slot-check", "bot"), "check"),
    ).not.toBeNull();
    direct.disconnect();
  }, 30_000);

  it("has its persistence checked on every master and replica (a replica without it is refused)", async () => {
    const { topology: cluster, connection } = world;
    await expect(checkRedisPersistence(connection, false, silentLogger())).resolves.toBeUndefined();
    const masters = await cluster.masters();
    const off = cluster.nodes.find((n) => !masters.includes(n))!.client();
    await off.config("SET", "appendonly", "no");
    await expect(checkRedisPersistence(connection, false, silentLogger())).rejects.toThrow(/appendonly "no"/);
    await off.config("SET", "appendonly", "yes");
    off.disconnect();
  });

  it("warns when a node stops every slot while one range is down (cluster-require-full-coverage yes)", async () => {
    const { topology: cluster, connection } = world;
    const quiet = capturingLogger();
    await checkRedisPersistence(connection, false, quiet.log);
    expect(quiet.lines().filter((l) => String(l.msg).includes("full-coverage"))).toEqual([]);
    const [master] = await cluster.masters();
    const direct = master!.client();
    await direct.config("SET", "cluster-require-full-coverage", "yes");
    try {
      const told = capturingLogger();
      await checkRedisPersistence(connection, false, told.log);
      const warning = told
        .lines()
        .find((l) => String(l.msg).includes("cluster-require-full-coverage is yes"));
      expect(warning).toMatchObject({ level: 40 });
      expect(String(warning!.nodes)).toContain(master!.address);
    } finally {
      await direct.config("SET", "cluster-require-full-coverage", "no");
      direct.disconnect();
    }
  });
});

describe("behind Sentinel (1 master, 2 replicas, 3 sentinels)", () => {
  const world = sentinelRuntime({ ...options("rg-sentinel"), replicas: 2, sentinels: 3 });

  it("follows the new master through a SENTINEL FAILOVER, losing and repeating nothing", async () => {
    const { topology: group, connection, standin, bot } = world;
    expect(connection.waitReplicas).toBe(1);
    await talk(standin, bot, 0, 2);
    const old = await group.master();
    await group.failover();
    const promoted = await group.promotedFrom(old);
    expect(promoted).not.toBe(old);
    await talk(standin, bot, 2, 4);
  }, 90_000);

  it("refuses the replica given as url", async () => {
    const { topology: group } = world;
    // A node that says it is a replica now (a demoted master turns into one a while after a failover).
    const roles = await Promise.all(
      group.data.map(async (d) => {
        const c = d.client();
        const info = await c.info("replication");
        c.disconnect();
        return info.includes("role:slave");
      }),
    );
    const replica = group.data[roles.indexOf(true)]!;
    const direct = RedisConnection.single(replica.url);
    await expect(checkRedisPersistence(direct, false, silentLogger())).rejects.toThrow(/is a replica/);
    direct.close();
  });
});
