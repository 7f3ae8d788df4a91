import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { demoNamespaces } from "../support/spine.js";
import { snapshotRefusal } from "../support/snapshot-refusal.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

/**
 * Webhook mode while Redis refuses writes (MISCONF): each delivery of the update is
 * answered 500, so Telegram keeps it and posts it again; its person is told once, not
 * once per delivery, and answered after the notice when Redis takes writes again.
 */
const ALICE = { id: 901, first_name: "Alice" };
let dir: string;
let server: RedisServer;
let redis: Redis;
let standin: TelegramApiStandin;
let bot: StandinBot;
let runtime: Runtime | undefined;
const capture = capturingLogger();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-webhook-outage-"));
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
const notices = () => texts().filter((t) => t === UNQUEUED_NOTICE);

it("tells the person once while the webhook's update cannot be queued, then answers it after the notice", async () => {
  const port = await freePort();
  const demo = demoNamespaces({}, ["feed"]);
  const config = telegramConfig({
    apiRoot: standin.url,
    mode: "webhook",
    webhook: { url: `http://127.0.0.1:${port}/telegram`, port, secretToken: "webhook-secret-0123" },
    namespaces: demo.config.namespaces,
    bots: [{ token: bot.token, users: [ALICE.id] }],
  });
  runtime = await startRuntime({
    config,
    redisUrl: server.url,
    prefix: "webhook-outage",
    log: capture.log,
    // Told after 2 s held instead of 10 s, so that the stand-in's deliveries (20 tries, ~20 s) outlast it.
    platforms: [
      createTelegramPlatform({
        polling: { notices: { afterMs: 2000, paceMs: 100, perOutage: 100, roomEveryMs: 600_000 } },
      }),
    ],
  });

  await snapshotRefusal.start(redis, join(dir, "redis"));
  const first = standin.userSends(bot.token, { from: ALICE, text: "/status" });
  standin.userSends(bot.token, { from: ALICE, text: "/status" });
  await waitFor(() => notices().length > 0, 20_000, "Alice told");
  const refused = () =>
    standin.webhookDeliveries.filter((d) => d.updateId === first.updateId && d.status === 500).length;
  const atNotice = refused();
  // Still refused: Telegram posts the update again, and nobody is told again.
  await waitFor(() => refused() >= atNotice + 3, 20_000, "deliveries refused after the notice");
  expect(standin.webhookDeliveries.some((d) => d.status === 200)).toBe(false);
  expect(
    capture
      .lines()
      .some(
        (l) =>
          String(l.msg).includes("webhook update was not taken") && JSON.stringify(l).includes("MISCONF"),
      ),
  ).toBe(true);
  await snapshotRefusal.end(redis, join(dir, "redis"));

  await waitFor(() => texts().length === 3, 30_000, "both answers");
  expect(notices()).toHaveLength(1);
  expect(texts()[0]).toBe(UNQUEUED_NOTICE);
  // The answers keep a second from the notice, as from each other (Telegram's limit in a chat).
  expect(standin.sendGaps(1000)).toEqual([]);
}, 90_000);
