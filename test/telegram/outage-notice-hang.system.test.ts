import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { NOTICE_WAIT_MS } from "../../src/edge/outage-notices.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { demoNamespaces } from "../support/spine.js";
import { snapshotRefusal } from "../support/snapshot-refusal.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * A told chat's next update waits while its outage notice is on its way, so that the
 * answer comes after it. A Bot API that takes the notice but never answers must not
 * hold that chat for the client's own timeout (grammY's is minutes): after
 * NOTICE_WAIT_MS the notice is given up and the chat is answered.
 */
const ALICE = { id: 901, first_name: "Alice" };
/** The notice's answer is held far longer than the test waits for the chat's answer. */
const HUNG_MS = 60_000;
let dir: string;
let server: RedisServer;
let redis: Redis;
let standin: TelegramApiStandin;
let bot: StandinBot;
let runtime: Runtime | undefined;
const capture = capturingLogger();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-notice-hang-"));
  server = await RedisServer.start({ dir: join(dir, "redis") });
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  standin = await TelegramApiStandin.start();
  bot = standin.addBot();
});
afterAll(async () => {
  await runtime?.stop();
  redis.disconnect();
  await standin.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const texts = () => standin.botMessages(bot.token, ALICE.id).map((m) => m.text);

it("answers a told chat once its hung notice is given up, not when the Bot API finally answers", async () => {
  const demo = demoNamespaces({}, ["feed"]);
  runtime = await startRuntime({
    config: telegramConfig({
      apiRoot: standin.url,
      namespaces: demo.config.namespaces,
      bots: [{ token: bot.token, users: [ALICE.id] }],
    }),
    redisUrl: server.url,
    prefix: "notice-hang",
    log: capture.log,
    // Told after 2 s held instead of 10 s.
    platforms: [
      createTelegramPlatform({
        polling: {
          timeoutSeconds: 1,
          backoffMs: { initial: 50, max: 500 },
          notices: { afterMs: 2000, paceMs: 100, perOutage: 100, roomEveryMs: 600_000 },
        },
      }),
    ],
  });
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");

  await snapshotRefusal.start(redis, join(dir, "redis"));
  // The next sendMessage (the notice: nothing else is sent meanwhile) reaches the chat but is never answered in time.
  standin.delayAnswer("sendMessage", HUNG_MS);
  standin.userSends(bot.token, { from: ALICE, text: "/status" });
  await waitFor(() => texts().includes(UNQUEUED_NOTICE), 20_000, "Alice told");
  const toldAt = Date.now();
  await snapshotRefusal.end(redis, join(dir, "redis"));

  await waitFor(() => texts().length === 2, NOTICE_WAIT_MS + 10_000, "the answer after the hung notice");
  const waited = Date.now() - toldAt;
  expect(texts()[0]).toBe(UNQUEUED_NOTICE);
  // Held while the notice was on its way (its answer must come after it), then let go.
  expect(waited).toBeGreaterThanOrEqual(NOTICE_WAIT_MS - 1000);
  expect(
    capture
      .lines()
      .some(
        (l) => String(l.msg).includes("outage notice not sent") && JSON.stringify(l).includes("given up"),
      ),
  ).toBe(true);
}, 90_000);
