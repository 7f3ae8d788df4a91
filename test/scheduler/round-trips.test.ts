import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { telegramConfig, waitFor } from "../support/telegram-fixtures.js";

const TURNS = 40;

describe("Redis round trips per turn", () => {
  let standin: TelegramApiStandin;
  let db: TestRedis;
  let bot: StandinBot;
  let runtime: Runtime;
  beforeAll(async () => {
    standin = await TelegramApiStandin.start();
    db = await testRedis();
    bot = standin.addBot();
    const base = telegramConfig({
      apiRoot: standin.url,
      namespaces: { feed: { command: [process.execPath, DEMO_SERVER], env: { ATTEST_TOOLS: "feed" } } },
      bots: [{ token: bot.token, users: Array.from({ length: TURNS }, (_, i) => 7000 + i) }],
    });
    const config = {
      ...base,
      // Limits raised, as a self-hosted Bot API allows: the count is the scheduler's, not waits'.
      telegram: {
        ...base.telegram!,
        limits: { botPerSecond: 100_000, chatPerSecond: 1000, groupPerMinute: 100_000 },
      },
    };
    runtime = await startRuntime({
      config,
      redisUrl: db.url,
      prefix: db.prefix,
      log: silentLogger(),
      platforms: [
        createTelegramPlatform({ polling: { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } } }),
      ],
    });
  });
  afterAll(async () => {
    await runtime.stop(0);
    await standin.close();
    await db.cleanup();
  });

  it("costs at most 6 commands a turn, Lua scripts counted once (redis-cli monitor's view)", async () => {
    // Warm up: the namespace child is started and its tools listed.
    standin.userSends(bot.token, { from: { id: 7000, first_name: "W" }, text: "what should I read today?" });
    await waitFor(() => standin.botMessages(bot.token, 7000).length === 1, 20_000, "warm-up");
    const monitor: Redis = await db.redis.monitor();
    const commands: string[] = [];
    monitor.on("monitor", (_time: string, args: string[], source: string) => {
      if (source.startsWith("lua")) return; // inside a script: not a round trip
      if (args.some((a) => a.includes(db.prefix))) commands.push(args[0]!.toLowerCase());
    });
    for (let i = 1; i < TURNS; i += 1) {
      const id = 7000 + i;
      standin.userSends(bot.token, { from: { id, first_name: "U" }, text: "what should I read today?" });
      await waitFor(() => standin.botMessages(bot.token, id).length === 1, 20_000, `answer ${i}`);
    }
    monitor.disconnect();
    const perTurn = commands.length / (TURNS - 1);
    expect(commands.filter((c) => c === "eval")).toEqual([]);
    console.log(`round trips per turn: ${perTurn.toFixed(2)}`, countBy(commands));
    expect(perTurn).toBeLessThanOrEqual(6);
  }, 60_000);
});

function countBy(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[i] = (out[i] ?? 0) + 1;
  return out;
}
