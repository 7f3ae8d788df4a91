import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSentinelTopology } from "../../bench/support/redis-topology.js";
import { redisClientReplacements } from "../../src/ops/metrics.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import type { RedisLostError } from "../../src/sessions/client-watch.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { heldProxy, type HeldProxy } from "../support/held-proxy.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * ioredis 5.11.1 ends a Sentinel client for good ("Connection is closed.") when its
 * failover detector sees `+switch-master` while the client is asking a sentinel for
 * the master after a lost connection; the process then answered nobody. This puts
 * every client of a running roomgate at exactly that point: the sentinel is reached
 * through a proxy that holds new connections, the master drops roomgate's connections
 * (CLIENT KILL), a SENTINEL FAILOVER is announced while they wait for the sentinel's
 * answer, and only then does the proxy let the answers through. The bot must answer
 * again; roomgate's own follower of the announcements (src/sessions/switch-follower.ts)
 * leaves a client that is connecting alone, so none ends and none has to be replaced.
 */
const ALICE = 7301;

describe("a Sentinel client told of +switch-master while it resolves the master", () => {
  const dir = mkdtempSync(join(tmpdir(), "rg-ended-"));
  let group: RedisSentinelTopology;
  let proxy: HeldProxy;
  let standin: TelegramApiStandin;
  let bot: StandinBot;
  let connection: RedisConnection;
  let runtime: Runtime;
  const lost: RedisLostError[] = [];
  const { log, lines } = capturingLogger();

  beforeAll(async () => {
    group = await RedisSentinelTopology.start({ dir, replicas: 1, sentinels: 1 });
    proxy = await heldProxy(group.sentinels[0]!.port);
    standin = await TelegramApiStandin.start();
    bot = standin.addBot();
    connection = new RedisConnection({ kind: "sentinel", name: group.name, nodes: [proxy.url] });
    // What this test is about is the client, not durability: writes wait for no replica.
    await connection.resolveWait(0, log);
    runtime = await startRuntime({
      config: telegramConfig({
        apiRoot: standin.url,
        namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
        bots: [{ token: bot.token, users: [ALICE] }],
      }),
      redis: connection,
      log,
      redisProbeMs: 200,
      onRedisLost: (err) => lost.push(err),
      platforms: [
        createTelegramPlatform({ polling: { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } } }),
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await runtime?.stop(0);
    connection?.close();
    proxy?.close();
    await standin?.close();
    await group?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The ids of the master's ordinary connections but the sentinel's and `master`'s own. */
  async function roomgateClients(master: Redis): Promise<number[]> {
    const me = Number(await master.call("CLIENT", "ID"));
    return String(await master.call("CLIENT", "LIST", "TYPE", "normal"))
      .trim()
      .split("\n")
      .filter((l) => !/ name=sentinel-/.test(l))
      .map((l) => Number(/^id=(\d+)/.exec(l)?.[1]))
      .filter((id) => id !== me);
  }

  /** Drops roomgate's connections to the master; how many. */
  async function dropClients(master: Redis): Promise<number> {
    const ids = await roomgateClients(master);
    for (const id of ids) await master.call("CLIENT", "KILL", "ID", String(id));
    return ids.length;
  }

  async function ask(n: number): Promise<void> {
    standin.userSends(bot.token, {
      from: { id: ALICE, first_name: "Alice" },
      text: `what should I read? ${n}`,
    });
    await waitFor(() => standin.botMessages(bot.token, ALICE).length >= n, 20_000, `answer ${n}`);
  }

  it("answers again, without a client ending", async () => {
    await ask(1);
    const sentinel = new Redis({ port: group.sentinels[0]!.port, lazyConnect: true });
    const detectors = async () =>
      String(await sentinel.call("CLIENT", "LIST"))
        .split("\n")
        .filter((l) => / sub=1 /.test(l)).length;
    const master = (await group.master()).client();
    // Every client of the runtime connected to the master (bullmq's duplicates too) subscribes to +switch-master.
    const clients = (await roomgateClients(master)).length;
    await waitFor(async () => (await detectors()) >= clients, 10_000, "every failover detector subscribed");
    const subscribed = await detectors();

    const announced = new Redis({ port: group.sentinels[0]!.port });
    await announced.subscribe("+switch-master");
    const switched = new Promise<void>((resolve) => announced.once("message", () => resolve()));

    proxy.hold();
    const killed = await dropClients(master);
    master.disconnect();
    expect(killed).toBeGreaterThan(0);
    // Each dropped client reconnects by asking the sentinel for the master, and waits at the proxy.
    await waitFor(() => proxy.held() >= killed, 10_000, "the dropped clients asking the sentinel");

    await group.failover();
    await switched;
    // The announcement reached every client's detector (through the proxy) while they wait.
    await waitFor(() => proxy.delivered("+switch-master") >= subscribed, 10_000, "the detectors told");
    proxy.release();

    await ask(2);
    const ended = (await redisClientReplacements.get()).values.filter((v) => v.labels.reason === "ended");
    expect(ended).toEqual([]);
    expect(lines().some((l) => String(l.msg).includes("a client ended and will not reconnect"))).toBe(false);
    expect(lost).toEqual([]);
    announced.disconnect();
    sentinel.disconnect();
  }, 90_000);
});
