import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { telegramConfig, waitFor } from "../support/telegram-fixtures.js";

const ALICE = { id: 8101, first_name: "Alice" };
const BOB = { id: 8102, first_name: "Bob" };

describe("Telegram intake with the flood check in the enqueue", () => {
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
      bots: [{ token: bot.token, users: [ALICE.id, BOB.id] }],
    });
    runtime = await startRuntime({
      config: { ...base, limits: { ...base.limits, turnsPerMinute: 2 } },
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

  const tooFast = (text: string | undefined) => text?.includes("more than 2 messages a minute") ?? false;

  it("answers a person's turns up to the rate; the excess gets one notice and no answer", async () => {
    for (let i = 0; i < 5; i++)
      standin.userSends(bot.token, { from: ALICE, text: `what should I read today? ${i}` });
    await waitFor(
      () => standin.botMessages(bot.token, ALICE.id).length >= 3,
      20_000,
      "two answers and a notice",
    );
    // Time for any wrongly queued turn to be answered too.
    await new Promise((r) => setTimeout(r, 1500));
    const texts = standin.botMessages(bot.token, ALICE.id).map((m) => m.text);
    expect(texts.filter(tooFast)).toHaveLength(1);
    expect(texts.filter((t) => !tooFast(t))).toHaveLength(2);
    expect(standin.pendingUpdates(bot.token)).toBe(0);

    // Another person is not held to Alice's count.
    standin.userSends(bot.token, { from: BOB, text: "what should I read today?" });
    await waitFor(() => standin.botMessages(bot.token, BOB.id).length === 1, 20_000, "Bob's answer");
    expect(tooFast(standin.botMessages(bot.token, BOB.id)[0]!.text)).toBe(false);
  }, 60_000);
});
