import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Receiver } from "../../src/core/adapter.js";
import { silentLogger } from "../../src/core/log.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { RedisRateLimiter } from "../../src/sessions/rate-limiter.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { RecordingInbox, telegramConfig, waitFor } from "../support/telegram-fixtures.js";

const ALICE = { id: 901, first_name: "Alice" };
const SECRET = "s3cret-token_value";

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let inbox: RecordingInbox;
let receiver: Receiver;
let port: number;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
  inbox = new RecordingInbox();
  port = await freePort();
  const config = telegramConfig({
    apiRoot: standin.url,
    mode: "webhook",
    webhook: { url: `http://127.0.0.1:${port}/telegram`, port, host: "127.0.0.1", secretToken: SECRET },
    bots: [{ token: bot.token, users: [ALICE.id] }],
  });
  const deps = {
    config,
    redis: db.redis,
    connection: db.connection,
    keys: db.keys,
    scheduler: db.scheduler,
    inbox,
    limiter: new RedisRateLimiter(db.redis),
    log: silentLogger(),
  };
  receiver = createTelegramPlatform()(deps).receiver!;
  await receiver.start();
});
afterEach(async () => {
  await receiver.stop();
  await db.cleanup();
});

describe("webhook mode", () => {
  it("sets each bot's webhook with the secret token and enqueues what Telegram posts", async () => {
    expect(standin.callsTo("setWebhook", bot.id)[0]!.params).toMatchObject({
      url: `http://127.0.0.1:${port}/telegram/${bot.id}`,
      secret_token: SECRET,
      allowed_updates: ["message", "edited_message", "callback_query", "my_chat_member"],
    });
    const { updateId } = standin.userSends(bot.token, { from: ALICE, text: "via webhook" });
    await waitFor(() => inbox.calls.length === 1, 5000, "the event");
    expect(inbox.calls[0]).toMatchObject({
      eventId: `tg:${bot.id}:${updateId}`,
      kind: "message",
      text: "via webhook",
    });
  });

  it("refuses a request without the right secret token", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`http://127.0.0.1:${port}/telegram/${bot.id}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({
          update_id: 1,
          message: {
            message_id: 1,
            date: 1,
            chat: { id: ALICE.id, type: "private" },
            from: ALICE,
            text: "forged",
          },
        }),
      });
    expect((await post({ "x-telegram-bot-api-secret-token": "wrong" })).status).toBe(401);
    expect((await post({})).status).toBe(401);
    expect(inbox.calls).toEqual([]);
  });

  it("answers 500 when the inbox cannot take an update, so Telegram delivers it again", async () => {
    inbox.failNext(1);
    const { updateId } = standin.userSends(bot.token, { from: ALICE, text: "retry me" });
    const statuses = () =>
      standin.webhookDeliveries.filter((d) => d.updateId === updateId).map((d) => d.status);
    await waitFor(() => statuses().includes(200), 5000, "the redelivery");
    expect(statuses()).toEqual([500, 200]);
    expect(inbox.calls).toHaveLength(1);
    expect(inbox.duplicates()).toEqual([]);
  });
});
