import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { RedisClusterTopology, RedisSentinelTopology } from "../../bench/support/redis-topology.js";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { RedisConnection } from "../../src/sessions/redis-connection.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { DEMO_SERVER } from "./spine.js";
import { TelegramApiStandin, type StandinBot } from "./telegram-api-standin.js";
import { telegramConfig } from "./telegram-fixtures.js";

type TelegramInput = Parameters<typeof telegramConfig>[0];

/** What a test file gets from `clusterRuntime` or `sentinelRuntime`; each field exists once beforeAll ran. */
export interface TopologyRuntime<T> {
  /** The Redis processes, started in a temporary folder of their own. */
  topology: T;
  standin: TelegramApiStandin;
  bot: StandinBot;
  /** The runtime's connection, its replica waits resolved as "auto". */
  connection: RedisConnection;
  /** roomgate with the Telegram platform polling the stand-in and the demo server as namespace `feed`. */
  runtime: Runtime;
  /** User `id` writes `text` to the bot in their private chat. */
  say(id: number, text: string): ReturnType<TelegramApiStandin["userSends"]>;
}

/** How the runtime of a `TopologyRuntime` is set up. */
export interface TopologyRuntimeOptions {
  /** Prefixes the temporary folder. */
  name: string;
  /** The bot's entry beside its token (its users, its groups). */
  bot: Omit<TelegramInput["bots"][number], "token">;
  /** The stand-in answers 429 to a second message in a chat within a second. */
  perChatRate?: boolean;
  sendLimits?: TelegramInput["sendLimits"];
}

/**
 * A test file's roomgate on a real Redis topology, started in beforeAll and stopped in
 * afterAll (runtime, connection, stand-in, Redis, folder).
 */
function topologyRuntime<T extends { stop(): Promise<void> }>(
  options: TopologyRuntimeOptions,
  start: (dir: string) => Promise<T>,
  connect: (topology: T) => RedisConnection,
): TopologyRuntime<T> {
  const dir = mkdtempSync(join(tmpdir(), `${options.name}-`));
  const world = {
    say: (id: number, text: string) =>
      world.standin.userSends(world.bot.token, { from: { id, first_name: "U" }, text }),
  } as Partial<TopologyRuntime<T>> as TopologyRuntime<T>;
  beforeAll(async () => {
    world.topology = await start(dir);
    world.standin = await TelegramApiStandin.start({ perChatRate: options.perChatRate ?? false });
    world.bot = world.standin.addBot();
    world.connection = connect(world.topology);
    await world.connection.resolveWait("auto", silentLogger());
    world.runtime = await startRuntime({
      config: telegramConfig({
        apiRoot: world.standin.url,
        namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
        bots: [{ token: world.bot.token, ...options.bot }],
        ...(options.sendLimits ? { sendLimits: options.sendLimits } : {}),
      }),
      redis: world.connection,
      log: silentLogger(),
      platforms: [
        createTelegramPlatform({ polling: { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } } }),
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await world.runtime?.stop(0);
    world.connection?.close();
    await world.standin?.close();
    await world.topology?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return world;
}

/** roomgate on a Redis Cluster of 3 masters with a replica each, connected through two of its nodes. */
export function clusterRuntime(options: TopologyRuntimeOptions): TopologyRuntime<RedisClusterTopology> {
  return topologyRuntime(
    options,
    (dir) => RedisClusterTopology.start({ dir }),
    (cluster) => new RedisConnection({ kind: "cluster", nodes: cluster.urls.slice(0, 2) }),
  );
}

/** roomgate behind a Sentinel group (one master, `replicas` replicas, `sentinels` sentinels). */
export function sentinelRuntime(
  options: TopologyRuntimeOptions & { replicas: number; sentinels: number },
): TopologyRuntime<RedisSentinelTopology> {
  return topologyRuntime(
    options,
    (dir) => RedisSentinelTopology.start({ dir, replicas: options.replicas, sentinels: options.sentinels }),
    (group) => new RedisConnection({ kind: "sentinel", name: group.name, nodes: group.urls }),
  );
}
