import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { feedList } from "../../src/demo/feed.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 1201, first_name: "Alice" };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let roomgate: RoomgateProcess;
let callLog: string;

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
  bot = standin.addBot({ username: "feed_cli_bot" });
  db = await testRedis();
  const demo = demoNamespaces({}, ["feed"]);
  callLog = demo.callLog;
  // The token comes from the environment, as DESIGN §9 asks of secrets.
  roomgate = RoomgateProcess.start(
    {
      redis: { url: db.url, prefix: db.prefix },
      namespaces: demo.config.namespaces,
      telegram: {
        apiRoot: standin.url,
        bots: [{ token: "${TELEGRAM_FEED_TOKEN}", namespace: "feed", users: [ALICE.id] }],
      },
    },
    { TELEGRAM_FEED_TOKEN: bot.token, REDIS_URL: db.url, LOG_LEVEL: "info" },
  );
  await waitFor(() => standin.isPolling(bot.token), 20_000, "the bot to poll");
});

afterAll(async () => {
  await roomgate.stop();
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
    expect(roomgate.output).not.toContain(bot.token.split(":")[1]);
  });

  it("stops cleanly on SIGTERM", async () => {
    expect(await roomgate.stop()).toBe(0);
  });
});
