import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 901, first_name: "Alice" };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
const processes: RoomgateProcess[] = [];

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
});
afterEach(async () => {
  for (const p of processes.splice(0)) p.kill();
  await db.cleanup();
});

function run(command: "start" | "worker", flags: string[] = []) {
  const demo = demoNamespaces({}, ["feed"]);
  const p = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token, LOG_LEVEL: "info" },
    command,
    flags,
  );
  processes.push(p);
  return { process: p, asks: () => callsIn(demo.callLog).filter((c) => c.startsWith("feed.ask")) };
}

const answers = () => standin.botMessages(bot.token, ALICE.id);

describe("roomgate start --receive-only", () => {
  it("queues what it receives and leaves every turn to a worker process, even one started later", async () => {
    const receiver = run("start", ["--receive-only"]);
    await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
    expect(receiver.process.output).toContain("receiving only");
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    // roomgate confirms an update to Telegram only once it is queued in Redis.
    await waitFor(() => standin.pendingUpdates(bot.token) === 0, 20_000, "the update to be queued");
    const worker = run("worker");
    await waitFor(() => answers().length === 1, 30_000, "the worker's answer");
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => answers().length === 2, 20_000, "the second answer");
    // A plain `start` takes a room it queued itself when it has a free slot; this one asked nothing.
    expect(receiver.asks()).toHaveLength(0);
    expect(worker.asks()).toHaveLength(2);
    expect(answers()[0]!.text).toContain("Today's digest");
    expect(await receiver.process.stop()).toBe(0);
  });

  it("a plain start beside a worker runs the turn it queued itself", async () => {
    const start = run("start");
    const worker = run("worker");
    await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
    await waitFor(() => worker.process.output.includes("roomgate worker started"), 20_000, "the worker");
    standin.userSends(bot.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => answers().length === 1, 20_000, "the answer");
    expect(start.asks()).toHaveLength(1);
    expect(worker.asks()).toHaveLength(0);
  });
});
