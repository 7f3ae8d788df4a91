import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Bot } from "grammy";
import type { Logger } from "../../src/core/log.js";
import { silentLogger } from "../../src/core/log.js";
import { DocumentReader } from "../../src/telegram/document-reader.js";
import { PollingReceiver } from "../../src/telegram/polling-receiver.js";
import { createTelegramBot } from "../../src/telegram/telegram-bot.js";
import { FloodGate } from "../../src/scheduler/flood-gate.js";
import { UpdateIntake } from "../../src/telegram/edge/update-intake.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { capturingLogger, RecordingInbox } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE = { id: 601, first_name: "Alice" };
const BOB = { id: 602, first_name: "Bob" };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 200 } };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
const running: PollingReceiver[] = [];

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
});
afterEach(async () => {
  standin.clearInjected("getUpdates");
  await Promise.all(running.splice(0).map((r) => r.stop()));
  await db.cleanup();
});

/** A fresh process's receiver: its own grammY bot, the shared Redis. */
async function receiver(inbox: RecordingInbox, log: Logger = silentLogger()): Promise<PollingReceiver> {
  const grammy: Bot = createTelegramBot(bot.token, standin.url);
  await grammy.init();
  const identity = {
    id: bot.id,
    username: bot.username,
    config: { token: bot.token, namespace: "feed", users: [ALICE.id, BOB.id], topics: [], groups: [] },
  };
  const reader = new DocumentReader(grammy.api, `${standin.url}/file/bot${bot.token}`, 1000, log);
  const flood = new FloodGate(db.scheduler, { turnsPerMinute: 1000, roomQueueCap: 1000 });
  const intake = new UpdateIntake(grammy, identity, reader, {
    inbox,
    redis: db.redis,
    keys: db.keys,
    flood,
    log,
  });
  const store = { redis: db.redis, keys: db.keys, durability: db.scheduler.durability };
  const r = new PollingReceiver(grammy.api, bot.id, store, (u) => intake.receive(u), log, FAST);
  running.push(r);
  await r.start();
  return r;
}

function send(text: string): number {
  return standin.userSends(bot.token, { from: ALICE, text }).updateId;
}

describe("PollingReceiver", () => {
  it("keeps the offset in Redis so a restart neither replays nor loses updates", async () => {
    const inbox = new RecordingInbox();
    const first = await receiver(inbox);
    await waitFor(() => standin.isPolling(bot.token), 5000, "a long poll");
    // The long poll in flight delivers these; every later getUpdates fails, so Telegram
    // never hears the new offset: as if the process died right after enqueueing.
    standin.inject("getUpdates", { status: 400, description: "simulated outage" }, 1000);
    const ids = [send("one"), send("two"), send("three")];
    await waitFor(() => inbox.calls.length === 3, 5000, "three events");
    await first.stop();
    running.splice(running.indexOf(first), 1);
    expect(await db.redis.get(db.keys.telegramOffset(bot.id))).toBe(String(ids[2]! + 1));
    expect(standin.pendingUpdates(bot.token)).toBeGreaterThan(0);
    const later = send("four (sent while down)");
    standin.clearInjected("getUpdates");

    await receiver(inbox);
    await waitFor(() => inbox.calls.length === 4, 5000, "the update sent while down");
    // Every update confirmed: nothing left that could arrive again.
    await waitFor(() => standin.pendingUpdates(bot.token) === 0, undefined, "the updates confirmed");
    expect(inbox.calls.map((e) => e.kind === "message" && e.text)).toEqual([
      "one",
      "two",
      "three",
      "four (sent while down)",
    ]);
    expect(inbox.duplicates()).toEqual([]);
    expect(inbox.calls.at(-1)!.eventId).toBe(`tg:${bot.id}:${later}`);
    expect(standin.pendingUpdates(bot.token)).toBe(0);
  });

  it("retries an update the inbox could not take, then moves on: nothing is lost", async () => {
    const inbox = new RecordingInbox();
    inbox.failNext(2);
    await receiver(inbox);
    const id = send("during a Redis blip");
    send("after it");
    await waitFor(() => inbox.calls.length === 2, 5000, "both events");
    expect(inbox.calls.map((e) => e.eventId)).toEqual([`tg:${bot.id}:${id}`, `tg:${bot.id}:${id + 1}`]);
    expect(await db.redis.get(db.keys.telegramOffset(bot.id))).toBe(String(id + 2));
  });

  it("sets aside a chat's update its shard refuses, with the chat's later ones, and a restart queues them in order", async () => {
    // Sent before polling starts, so that one getUpdates hands all three over as a batch.
    const ids = [send("one"), send("two"), send("three")];
    const inbox = new RecordingInbox();
    let triesOfTwo = 0;
    const stuck = new (class extends RecordingInbox {
      override async enqueue(event: Parameters<RecordingInbox["enqueue"]>[0]): Promise<boolean> {
        if (event.kind === "message" && event.text === "two") {
          triesOfTwo += 1;
          throw new Error("inbox unavailable");
        }
        return inbox.enqueue(event);
      }
    })();
    const first = await receiver(stuck);
    await waitFor(() => inbox.calls.length === 1, 5000, "the first update");
    await waitFor(() => triesOfTwo >= 2, undefined, "the second update retried");
    // "two" and "three" behind it are kept in Redis, so the offset moves past the batch.
    await waitFor(
      async () => (await db.redis.get(db.keys.telegramOffset(bot.id))) === String(ids[2]! + 1),
      5000,
      "the offset past the batch",
    );
    expect(inbox.calls.map((e) => e.kind === "message" && e.text)).toEqual(["one"]);
    await first.stop();
    running.splice(running.indexOf(first), 1);

    await receiver(inbox);
    await waitFor(() => inbox.calls.length === 3, 5000, "the updates set aside");
    expect(inbox.calls.map((e) => e.kind === "message" && e.text)).toEqual(["one", "two", "three"]);
    expect(inbox.duplicates()).toEqual([]);
    // Queued, they are no longer kept.
    await waitFor(
      async () =>
        (
          await Promise.all(
            Array.from({ length: db.keys.shards }, (_, n) => db.redis.hlen(db.keys.telegramAside(bot.id, n))),
          )
        ).every((n) => n === 0),
      5000,
      "nothing left set aside",
    );
  });

  it("keeps queueing other chats' updates while one chat's cannot be queued, that chat's in order", async () => {
    const inbox = new RecordingInbox();
    let held = true;
    const gated = new (class extends RecordingInbox {
      override async enqueue(event: Parameters<RecordingInbox["enqueue"]>[0]): Promise<boolean> {
        if (held && event.kind === "message" && event.room.endsWith(String(BOB.id)))
          throw new Error("slot range down");
        return inbox.enqueue(event);
      }
    })();
    await receiver(gated);
    await waitFor(() => standin.isPolling(bot.token), 5000, "a long poll");
    standin.userSends(bot.token, { from: BOB, text: "bob 1" });
    standin.userSends(bot.token, { from: BOB, text: "bob 2" });
    // Alice's messages come in later batches, while Bob's first is still refused.
    for (const text of ["alice 1", "alice 2", "alice 3"]) {
      send(text);
      await waitFor(() => inbox.calls.some((e) => e.kind === "message" && e.text === text), 5000, text);
    }
    standin.userSends(bot.token, { from: BOB, text: "bob 3" });
    send("alice 4");
    await waitFor(() => inbox.calls.length === 4, 5000, "alice 4");
    held = false;
    await waitFor(() => inbox.calls.length === 7, 10_000, "bob's three, once his shard takes them");
    const texts = inbox.calls.map((e) => e.kind === "message" && e.text);
    expect(texts.slice(0, 4)).toEqual(["alice 1", "alice 2", "alice 3", "alice 4"]);
    expect(texts.slice(4)).toEqual(["bob 1", "bob 2", "bob 3"]);
    expect(inbox.duplicates()).toEqual([]);
  });

  it("logs a 409 conflict with a second poller clearly and keeps polling, never crashing", async () => {
    const inbox = new RecordingInbox();
    const { log, lines } = capturingLogger();
    await receiver(inbox, log);
    const intruder = await receiver(new RecordingInbox());
    await waitFor(() => lines().some((l) => String(l.msg).includes("409 Conflict")), 5000, "a 409 warning");
    await intruder.stop();
    running.splice(running.indexOf(intruder), 1);
    send("still here?");
    await waitFor(
      () => inbox.calls.some((e) => e.kind === "message" && e.text === "still here?"),
      undefined,
      "the next update",
    );
    expect(lines().find((l) => String(l.msg).includes("409"))).toMatchObject({ level: 40, botId: bot.id });
  });

  it("answers a press on an already chosen offer on the spot, without a turn", async () => {
    const inbox = new RecordingInbox();
    await receiver(inbox);
    const api = createTelegramBot(bot.token, standin.url).api;
    const sent = await api.sendMessage(ALICE.id, "offer", {
      reply_markup: { inline_keyboard: [[{ text: "✅ done", callback_data: "rg:chosen" }]] },
    });
    const { callbackQueryId } = standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: sent.message_id,
    });
    await waitFor(() => standin.callbackAnswer(callbackQueryId), 5000, "the answer");
    expect(inbox.calls).toEqual([]);
  });
});
