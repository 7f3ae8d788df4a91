import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";
import { snapshotRefusal } from "../support/snapshot-refusal.js";

/**
 * Redis refusing writes (MISCONF: a snapshot it cannot write) for longer than a few
 * seconds: the poller keeps the updates unconfirmed and retries them, and each person
 * whose message waits is told once — not once per retry nor per message — then
 * answered when Redis takes writes again.
 */
const ALICE = { id: 901, first_name: "Alice" };
const BOB = { id: 902, first_name: "Bob" };
let dir: string;
let server: RedisServer;
let redis: Redis;
let standin: TelegramApiStandin;
let bot: StandinBot;
let roomgate: RoomgateProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rg-outage-"));
  server = await RedisServer.start({ dir: join(dir, "redis") });
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  standin = await TelegramApiStandin.start();
  bot = standin.addBot();
});
afterAll(async () => {
  roomgate?.kill();
  redis.disconnect();
  await standin.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const texts = (chatId: number) => standin.botMessages(bot.token, chatId).map((m) => m.text);
const notices = (chatId: number) => texts(chatId).filter((t) => t === UNQUEUED_NOTICE);

it("tells each person whose message cannot be queued once, and answers every message once Redis is back", async () => {
  const demo = demoNamespaces({}, ["feed"]);
  roomgate = RoomgateProcess.start(
    {
      redis: { url: server.url, prefix: "outage" },
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id, BOB.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token },
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");

  await snapshotRefusal.start(redis, join(dir, "redis"));
  for (const person of [ALICE, BOB]) {
    standin.userSends(bot.token, { from: person, text: "/status" });
    standin.userSends(bot.token, { from: person, text: "/status" });
  }
  await waitFor(() => notices(ALICE.id).length > 0 && notices(BOB.id).length > 0, 40_000, "both told");
  // Still refused: the poller retries every second, and nobody is told again.
  await waitFor(
    () => (roomgate!.output.match(/could not enqueue an update; retrying/g) ?? []).length >= 8,
    20_000,
    "retries after the notices",
  );
  expect(roomgate.output).toContain("MISCONF");
  await snapshotRefusal.end(redis, join(dir, "redis"));

  await waitFor(() => texts(ALICE.id).length === 3 && texts(BOB.id).length === 3, 30_000, "the answers");
  // The answers keep a second from the notice, as from each other (Telegram's limit in a chat).
  expect(standin.sendGaps(1000)).toEqual([]);
  for (const person of [ALICE, BOB]) {
    expect(notices(person.id)).toHaveLength(1);
    expect(texts(person.id).filter((t) => t !== UNQUEUED_NOTICE)).toHaveLength(2);
  }
}, 90_000);
