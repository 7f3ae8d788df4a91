import calculateSlot from "cluster-key-slot";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisClusterTopology } from "../../bench/support/redis-topology.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { rangeToKill } from "../support/cluster-range.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 24: a room outside a dead Cluster range is answered by a worker process while
 * the range is down. The receiving process runs no turns, so every room it queues is
 * woken through Redis for the worker. A look at every shard for due rooms waits for
 * the dead range's shards for seconds (the client retrying); the worker must claim
 * what it is woken for meanwhile, not after the look gives up (a live room then waited
 * 8–14 s in the fault script's `range-down` runs).
 */
describe("a worker claims live rooms while a Cluster range is down", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-lane-range-"));
  let cluster: RedisClusterTopology;
  let standin: TelegramApiStandin;
  let receiver: Runtime;
  let worker: Runtime;
  const connections: RedisConnection[] = [];
  let bot: StandinBot;
  const candidates = Array.from({ length: 64 }, (_, i) => 8600 + i);
  const workerLog = capturingLogger();

  const start = async (role: "receiver" | "worker"): Promise<Runtime> => {
    const connection = new RedisConnection({ kind: "cluster", nodes: cluster.urls.slice(0, 2) });
    connections.push(connection);
    await connection.resolveWait("auto", silentLogger());
    return startRuntime({
      config: telegramConfig({
        apiRoot: standin.url,
        namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
        bots: [{ token: bot.token, users: candidates }],
        sendLimits: { botPerSecond: 1000, chatPerSecond: 100, groupPerMinute: 1000 },
      }),
      redis: connection,
      log: role === "worker" ? workerLog.log : silentLogger(),
      platforms: [createTelegramPlatform({ polling: { backoffMs: { initial: 50, max: 500 } } })],
      workers: role === "worker",
      receivers: role === "receiver",
    });
  };

  beforeAll(async () => {
    cluster = await RedisClusterTopology.start({ dir });
    standin = await TelegramApiStandin.start();
    bot = standin.addBot();
    worker = await start("worker");
    receiver = await start("receiver");
  }, 60_000);
  afterAll(async () => {
    await receiver?.stop(0);
    await worker?.stop(0);
    for (const c of connections) c.close();
    await standin?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const say = (id: number, text: string) =>
    standin.userSends(bot.token, { from: { id, first_name: "U" }, text });
  const answers = (id: number) => standin.botMessages(bot.token, id).map((m) => m.text ?? "");

  it("answers each live room within seconds, its message woken while the dead shards are looked at", async () => {
    const { prefix, shards } = worker.deps.keys;
    // The range to kill holds neither the bot's send windows nor the lane's wake-up list:
    // the live rooms' way is then all in reach, and only the look at every shard is not.
    const kept = [calculateSlot(`tg:${bot.id}`), calculateSlot("telegram")];
    const down = await rangeToKill(cluster, kept, { botId: bot.id, prefix, shards });
    const inDown = down.holds;
    const live = candidates.filter((id) => !inDown(id)).slice(0, 6);
    expect(candidates.some(inDown)).toBe(true);
    for (const id of live) say(id, "search first");
    await waitFor(() => live.every((id) => answers(id).length === 1), 40_000, "the first answers");

    const { id } = await cluster.identify(down.master);
    const replica = await cluster.replicaOf(id);
    await Promise.all([down.master.kill(), replica.kill()]);
    // Once the worker has looked at every shard with the range down, it looks again at
    // once (its last look is long past) or after a few seconds: the rooms below come
    // while such a look waits for the dead shards, one after another.
    await waitFor(
      () => workerLog.lines().some((l) => l.msg === "looking for due rooms failed; retrying"),
      60_000,
      "the worker's look at the shards with the range down",
    );
    const waits: number[] = [];
    for (const chat of live) {
      const sentAt = Date.now();
      say(chat, "search again");
      await waitFor(() => answers(chat).length === 2, 40_000, `chat ${chat}'s answer with the range down`);
      waits.push(Date.now() - sentAt);
    }
    // A claim waits for nothing out of reach. The first booking after the worker saw the
    // range's errors waits for the receivers' outage-notice marks (notice-marks.ts, up
    // to 3 s, once): about 3 s here, the rest a few ms. Waiting for the dead shards' look
    // took 7.3 s and 12.7 s.
    expect(Math.max(...waits), `waits ${waits.join(", ")} ms`).toBeLessThan(5000);

    await down.master.start();
    await replica.start();
    await cluster.allOk();
  }, 200_000);
});
