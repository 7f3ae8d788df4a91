import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 5101, first_name: "Alice" };
const BOB = { id: 5102, first_name: "Bob" };
const SLOW_MS = 1500;

let standin: TelegramApiStandin;
let bot: StandinBot;
let db: TestRedis;
let roomgate: RoomgateProcess;
let port: number;

/** One sample of the scraped text: `name{labels} value`, labels given as a subset. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) total += Number(line.split(" ").at(-1));
  }
  return total;
}

const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ username: "metrics_feed_bot" });
  db = await testRedis();
  port = await freePort();
  roomgate = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      http: { host: "127.0.0.1", port },
      namespaces: {
        feed: {
          command: [process.execPath, DEMO_SERVER],
          env: { ATTEST_TOOLS: "feed", DEMO_SLOW_MS: String(SLOW_MS) },
        },
      },
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: bot.token, namespace: "feed", users: [ALICE.id, 5103, 5104] }],
      },
    },
    { LOG_LEVEL: "info" },
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
});

afterAll(async () => {
  await roomgate.stop();
  await db.cleanup();
  await standin.close();
});

describe("/metrics after real turns", () => {
  it("shows the queue waiting while slow turns run, then empty again", async () => {
    // Three rooms' questions at once: each ask takes SLOW_MS, so events wait in the inboxes.
    for (const id of [ALICE.id, 5103, 5104]) {
      standin.userSends(bot.token, { from: { id, first_name: "U" }, text: "what should I read today?" });
    }
    await waitFor(async () => sample(await scrape(), "roomgate_queue_depth") >= 2, 10_000, "a queue");
    // The oldest waiting event ages while the slow turns run (SLOW_MS each).
    const busy = await waitFor(
      async () => {
        const text = await scrape();
        return sample(text, "roomgate_queue_oldest_age_seconds") > 0.2 && text;
      },
      10_000,
      "the oldest event's age past 0.2 s",
    );
    expect(sample(busy, "roomgate_queue_rooms")).toBeGreaterThanOrEqual(1);
    for (const id of [ALICE.id, 5103, 5104]) {
      await waitFor(() => standin.botMessages(bot.token, id).length === 1, 30_000, "every answer");
    }
    await waitFor(async () => sample(await scrape(), "roomgate_queue_depth") === 0, 10_000, "an empty queue");
    const idle = await scrape();
    expect(sample(idle, "roomgate_queue_oldest_age_seconds")).toBe(0);
    expect(
      sample(idle, "roomgate_turns_total", { platform: "telegram", namespace: "feed", outcome: "delivered" }),
    ).toBe(3);
    expect(sample(idle, "roomgate_turn_seconds_count", { platform: "telegram", namespace: "feed" })).toBe(3);
    expect(sample(idle, "roomgate_namespace_call_seconds_count", { namespace: "feed", outcome: "ok" })).toBe(
      3,
    );
    // Each ask took at least SLOW_MS: the latency histogram saw it.
    expect(
      sample(idle, "roomgate_namespace_call_seconds_bucket", { namespace: "feed", outcome: "ok", le: "1" }),
    ).toBe(0);
    expect(
      sample(idle, "roomgate_sends_total", { platform: "telegram", outcome: "ok" }),
    ).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it("counts refused strangers, scope refusals, 429s and retries", async () => {
    standin.userSends(bot.token, { from: BOB, text: "let me in" });
    await waitFor(() => standin.botMessages(bot.token, BOB.id).length === 1, 20_000, "the refusal");
    standin.userSends(bot.token, { from: ALICE, text: "/call runs.compare family=kdsweep" });
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length === 2, 20_000, "the scope refusal");
    standin.inject("sendMessage", { status: 429, retryAfter: 1 });
    standin.userSends(bot.token, { from: ALICE, text: "/status" });
    await waitFor(
      () => standin.botMessages(bot.token, ALICE.id).length === 3,
      20_000,
      "the status after a 429",
    );
    const text = await scrape();
    expect(sample(text, "roomgate_refused_total", { platform: "telegram" })).toBe(1);
    expect(
      sample(text, "roomgate_scope_refusals_total", { namespace: "feed", reason: "not_in_namespace" }),
    ).toBe(1);
    expect(sample(text, "roomgate_rate_limited_total", { platform: "telegram" })).toBe(1);
    expect(sample(text, "roomgate_sends_total", { platform: "telegram", outcome: "rate_limited" })).toBe(1);
    expect(sample(text, "roomgate_send_retries_total", { platform: "telegram" })).toBe(1);
    // Defined for the scheduler's dead-letter list, exported from the start so dashboards can use it.
    expect(text).toContain("# TYPE roomgate_dead_letters_total counter");
  }, 60_000);
});
