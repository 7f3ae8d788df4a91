import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { feedList } from "../../src/demo/feed.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/telegram-fixtures.js";

const ALICE = { id: 1201, first_name: "Alice" };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let child: ChildProcess;
let callLog: string;
let output = "";

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
  bot = standin.addBot({ username: "feed_cli_bot" });
  db = await testRedis();
  const dir = mkdtempSync(join(tmpdir(), "roomgate-start-"));
  callLog = join(dir, "calls.log");
  const config = join(dir, "config.yaml");
  // The token comes from the environment, as DESIGN §9 asks of secrets.
  writeFileSync(
    config,
    [
      `redis: { url: "${db.url}", prefix: ${db.prefix} }`,
      "namespaces:",
      "  feed:",
      `    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(DEMO_SERVER)}]`,
      `    env: { ATTEST_TOOLS: feed, DEMO_CALL_LOG: ${JSON.stringify(callLog)} }`,
      "telegram:",
      `  apiRoot: ${standin.url}`,
      "  bots:",
      "    - token: ${TELEGRAM_FEED_TOKEN}",
      "      namespace: feed",
      `      users: [${ALICE.id}]`,
    ].join("\n"),
  );
  child = spawn(process.execPath, ["bin/roomgate", "start", "-c", config], {
    env: { ...process.env, TELEGRAM_FEED_TOKEN: bot.token, REDIS_URL: db.url, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
});

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await db.cleanup();
  await standin.close();
});

describe("roomgate start -c config.yaml with one bot bound to feed", () => {
  it("holds a whole conversation: question, ask-back, button, answer", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "show me the feed" });
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length === 1, 20_000, "the ask-back");
    const [offer] = standin.botMessages(bot.token, ALICE.id);
    expect(offer!.reply_markup!.inline_keyboard.flat().length).toBe(2);
    standin.userPresses(bot.token, { from: ALICE, chatId: ALICE.id, messageId: offer!.message_id });
    await waitFor(() => standin.botMessages(bot.token, ALICE.id).length === 2, 20_000, "the answer");
    expect(standin.botMessages(bot.token, ALICE.id)[1]!.text).toContain(feedList().answer);
    expect(callsIn(callLog).map((l) => l.split("\t")[0])).toEqual(["feed.ask", "feed.list"]);
    expect(output).not.toContain(bot.token.split(":")[1]);
  });

  it("stops cleanly on SIGTERM", async () => {
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
