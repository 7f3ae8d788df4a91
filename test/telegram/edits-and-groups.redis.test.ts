import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Receiver } from "../../src/core/adapter.js";
import { silentLogger } from "../../src/core/log.js";
import { permissionDeps } from "../../src/runtime.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { RecordingInbox, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 6101, first_name: "Alice" };
const GATED = { id: -100610, type: "supergroup" as const, title: "Gated" };
const OPEN = { id: -100611, type: "supergroup" as const, title: "Open" };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let receiver: Receiver | undefined;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot({ username: "edits_feed_bot" });
});
afterEach(async () => {
  await receiver?.stop();
  receiver = undefined;
  await db.cleanup();
});

async function start(edits?: { reask: boolean; windowSeconds: number }): Promise<RecordingInbox> {
  const inbox = new RecordingInbox();
  const config = telegramConfig({
    apiRoot: standin.url,
    bots: [
      {
        token: bot.token,
        users: [ALICE.id],
        groups: [
          { chat: GATED.id, users: [ALICE.id] },
          { chat: OPEN.id, users: [ALICE.id], respond: "all" },
        ],
      },
    ],
    ...(edits ? { edits } : {}),
  });
  const deps = {
    config,
    redis: db.redis,
    connection: db.connection,
    keys: db.keys,
    scheduler: db.scheduler,
    inbox,
    limiter: new RedisRateLimiter(db.redis, db.schedulerKeys),
    log: silentLogger(),
    ...permissionDeps(config, db.redis, db.keys),
  };
  receiver = createTelegramPlatform({ polling: { timeoutSeconds: 1 } })(deps).receiver!;
  await receiver.start();
  return inbox;
}

const texts = (inbox: RecordingInbox) => inbox.calls.flatMap((e) => (e.kind === "message" ? [e.text] : []));

/**
 * A DM always passes: once it arrived and the offset past it is stored (a batch's chats
 * are queued side by side, the offset after all of them), every update pushed before it
 * was handled.
 */
async function settle(inbox: RecordingInbox): Promise<void> {
  const { updateId } = standin.userSends(bot.token, { from: ALICE, text: "marker" });
  await waitFor(
    async () => Number(await db.redis.get(db.keys.telegramOffset(bot.id))) > updateId,
    10_000,
    "the marker's batch",
  );
  const at = inbox.calls.findIndex((e) => e.kind === "message" && e.text === "marker");
  expect(at).toBeGreaterThanOrEqual(0);
  inbox.calls.splice(at, 1);
}

describe("Telegram groups and edits", () => {
  it("a group bound with respond: all takes every message; other groups only addressed ones", async () => {
    const inbox = await start();
    standin.userSends(bot.token, { from: ALICE, chat: GATED, text: "lunch?" });
    standin.userSends(bot.token, { from: ALICE, chat: OPEN, text: "what should I read today?" });
    await settle(inbox);
    expect(texts(inbox)).toEqual(["what should I read today?"]);
  });

  it("ignores an edit by default", async () => {
    const inbox = await start();
    const { message } = standin.userSends(bot.token, { from: ALICE, text: "what shuold I read" });
    standin.userEdits(bot.token, {
      chatId: ALICE.id,
      messageId: message.message_id,
      text: "what should I read",
    });
    await settle(inbox);
    expect(texts(inbox)).toEqual(["what shuold I read"]);
  });

  it("asks an edit again when edits.reask is on, within the window only", async () => {
    const inbox = await start({ reask: true, windowSeconds: 30 });
    const first = standin.userSends(bot.token, { from: ALICE, text: "compare my sweeep" }).message;
    standin.userEdits(bot.token, {
      chatId: ALICE.id,
      messageId: first.message_id,
      text: "compare my sweep",
      afterSeconds: 5,
    });
    const late = standin.userSends(bot.token, { from: ALICE, text: "list my runz" }).message;
    standin.userEdits(bot.token, {
      chatId: ALICE.id,
      messageId: late.message_id,
      text: "list my runs",
      afterSeconds: 31,
    });
    await settle(inbox);
    expect(texts(inbox)).toEqual(["compare my sweeep", "compare my sweep", "list my runz"]);
    // The re-asked edit is its own event (its own update id), so it is not taken for a duplicate.
    expect(new Set(inbox.calls.map((e) => e.eventId)).size).toBe(inbox.calls.length);
  });
});
