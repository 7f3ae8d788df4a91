import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { feedDigest, feedItem, feedList } from "../../src/demo/feed.js";
import { FEED_ITEMS } from "../../src/demo/fixtures.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot, type StandinUser } from "../support/telegram-api-standin.js";
import { telegramConfig, waitFor } from "../support/telegram-fixtures.js";

const ALICE: StandinUser = { id: 801, first_name: "Alice" };
const BOB: StandinUser = { id: 802, first_name: "Bob" };
const MALLORY: StandinUser = { id: 866, first_name: "Mallory" };
const GROUP = { id: -100800, type: "supergroup" as const, title: "Ops" };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let callLog: string;
let runtime: Runtime | undefined;

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot({ username: "feed_standin_bot" });
  callLog = join(mkdtempSync(join(tmpdir(), "roomgate-tg-calls-")), "calls.log");
  runtime = await start();
});
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  await db.cleanup();
});

/** Starts one roomgate process: Telegram receiver and sender, workers, the demo feed server. */
function start(): Promise<Runtime> {
  const config = telegramConfig({
    apiRoot: standin.url,
    namespaces: {
      feed: {
        command: [process.execPath, DEMO_SERVER],
        env: { ATTEST_TOOLS: "feed", DEMO_CALL_LOG: callLog },
      },
    },
    bots: [{ token: bot.token, users: [ALICE.id, BOB.id], groups: [{ chat: GROUP.id, users: [ALICE.id] }] }],
  });
  return startRuntime({
    config,
    redisUrl: db.url,
    prefix: db.prefix,
    log: silentLogger(),
    platforms: [createTelegramPlatform({ polling: FAST })],
  });
}

const messagesTo = (chatId: number) => standin.botMessages(bot.token, chatId);

async function ask(from: StandinUser, text: string, count: number) {
  standin.userSends(bot.token, { from, text });
  await waitFor(() => messagesTo(from.id).length >= count, 20_000, `reply ${count} to ${from.first_name}`);
  return messagesTo(from.id).at(-1)!;
}

function askCalls(): string[] {
  return callsIn(callLog).filter((line) => line.startsWith("feed.ask\t"));
}

describe("Telegram end to end (stand-in Bot API, real Redis, queue, engine and demo server)", () => {
  it("answers a DM question verbatim: answer line, item ids as links, caveat in full", async () => {
    const expected = feedDigest();
    const askedAt = Date.now();
    const reply = await ask(ALICE, "what should I read today?", 1);
    expect(reply.text).toContain(expected.answer);
    expect(reply.text).toContain(expected.caveat!);
    const links = (reply.entities ?? []).filter((e) => e.type === "text_link");
    expect(links.map((e) => reply.text!.slice(e.offset, e.offset + e.length))).toEqual(
      expected.items.map((i) => i.id),
    );
    expect(links.map((e) => e.url)).toEqual(expected.items.map((i) => i.url));
    expect(reply.sent).toMatchObject({ parse_mode: "HTML", link_preview_options: { is_disabled: true } });
    expect(standin.commands(bot.token).map((c) => c.command)).toContain("tools");
    // Typing is shown only once a turn has run for about a second, never for a quick answer.
    for (const typing of standin.callsTo("sendChatAction", bot.id))
      expect(typing.at - askedAt).toBeGreaterThanOrEqual(900);
  });

  it("asks back with buttons; a press runs the chosen tool, marks the keyboard, and cannot run twice", async () => {
    const offer = await ask(ALICE, "show me the feed", 1);
    const buttons = offer.reply_markup!.inline_keyboard.flat();
    expect(buttons).toHaveLength(2);
    const token = buttons[0]!.callback_data!;
    const label = buttons[0]!.text.replace(/^\d+\.\s*/, "");

    // Bob is allowed in his own DM, but the offer was made in Alice's chat: forged.
    await ask(BOB, "what's new?", 1);
    const forged = standin.userPresses(bot.token, {
      from: BOB,
      chatId: BOB.id,
      messageId: messagesTo(BOB.id)[0]!.message_id,
      data: token,
    });
    await waitFor(() => standin.callbackAnswer(forged.callbackQueryId), 20_000, "the forged press's answer");
    expect(String(standin.callbackAnswer(forged.callbackQueryId)!.text)).toMatch(/not known here/);
    const callsBefore = callsIn(callLog).length;

    const pressed = standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
    });
    await waitFor(() => messagesTo(ALICE.id).length === 2, 20_000, "the chosen tool's answer");
    expect(messagesTo(ALICE.id)[1]!.text).toContain(feedList().answer);
    expect(standin.callbackAnswer(pressed.callbackQueryId)).toMatchObject({ text: `Chosen: ${label}` });
    expect(
      callsIn(callLog)
        .slice(callsBefore)
        .map((l) => l.split("\t")[0]),
    ).toEqual(["feed.list"]);
    await waitFor(
      () => messagesTo(ALICE.id)[0]!.reply_markup!.inline_keyboard.flat().length === 1,
      5000,
      "the edit",
    );
    expect(messagesTo(ALICE.id)[0]!.reply_markup!.inline_keyboard).toEqual([
      [{ text: `✅ ${label}`, callback_data: "rg:chosen" }],
    ]);

    // A client that still shows the old keyboard sends the same token again.
    const again = standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
      data: token,
    });
    await waitFor(() => standin.callbackAnswer(again.callbackQueryId), 20_000, "the second press's answer");
    expect(String(standin.callbackAnswer(again.callbackQueryId)!.text)).toMatch(/already made/);
    // The ✅ button itself is answered on the spot.
    const tick = standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
    });
    await waitFor(() => standin.callbackAnswer(tick.callbackQueryId), 5000, "the ✅ press's answer");
    await new Promise((r) => setTimeout(r, 500));
    expect(messagesTo(ALICE.id)).toHaveLength(2);
    expect(callsIn(callLog).slice(callsBefore)).toHaveLength(1);
  });

  it("never lets a stranger reach the namespace: one refusal, and a refusal toast for presses", async () => {
    await ask(ALICE, "what's new?", 1);
    const callsBefore = callsIn(callLog).length;
    const refusal = await ask(MALLORY, "what's new?", 1);
    expect(refusal.text).toMatch(/not allowed/);
    standin.userSends(bot.token, { from: MALLORY, text: "please?" });
    // In a listed group Mallory is not on the group's list either.
    standin.userSends(bot.token, { from: MALLORY, chat: GROUP, text: "@feed_standin_bot what's new?" });
    const press = standin.userPresses(bot.token, {
      from: MALLORY,
      chatId: MALLORY.id,
      messageId: refusal.message_id,
      data: "x",
    });
    await waitFor(() => standin.callbackAnswer(press.callbackQueryId), 20_000, "the stranger's press answer");
    expect(String(standin.callbackAnswer(press.callbackQueryId)!.text)).toMatch(/not allowed/);
    await new Promise((r) => setTimeout(r, 1000));
    expect(messagesTo(MALLORY.id)).toHaveLength(1);
    expect(callsIn(callLog).length).toBe(callsBefore);
  });

  it("fills an asked-for argument from a text document and refuses other files clearly", async () => {
    const offer = await ask(ALICE, "hello", 1);
    const itemButton = offer.reply_markup!.inline_keyboard.flat().find((b) => b.text.includes("feed.item"))!;
    standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
      data: itemButton.callback_data!,
    });
    await waitFor(() => messagesTo(ALICE.id).length === 2, 20_000, "the question for the id");
    expect(messagesTo(ALICE.id)[1]!.text).toMatch(/I need id: /);

    const pdf = standin.addFile({ name: "paper.pdf", mime: "application/pdf", content: "%PDF-1.4" });
    standin.userSends(bot.token, { from: ALICE, document: pdf });
    await waitFor(() => messagesTo(ALICE.id).length === 3, 20_000, "the refusal");
    expect(messagesTo(ALICE.id)[2]!.text).toMatch(/I cannot use that file: "paper\.pdf" is not a text file/);

    const id = FEED_ITEMS[0]!.id;
    const note = standin.addFile({ name: "id.txt", mime: "application/octet-stream", content: id });
    standin.userSends(bot.token, { from: ALICE, document: note });
    await waitFor(() => messagesTo(ALICE.id).length === 4, 20_000, "the item");
    expect(messagesTo(ALICE.id)[3]!.text).toContain(feedItem(id).answer);
    expect(standin.callsTo("getFile", bot.id)).toHaveLength(1);
  });

  it("answers commands and mentions in a listed group, each forum topic its own room", async () => {
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "chatting among ourselves" });
    standin.userSends(bot.token, {
      from: ALICE,
      chat: GROUP,
      text: "@feed_standin_bot what's new?",
      threadId: 5,
    });
    await waitFor(() => standin.botMessages(bot.token, GROUP.id, 5).length === 1, 20_000, "the topic answer");
    expect(standin.botMessages(bot.token, GROUP.id, 5)[0]!.text).toContain(feedList().answer);
    expect(messagesTo(GROUP.id)).toHaveLength(1);
    expect(askCalls()).toHaveLength(1);
  });

  it("keeps the conversation across a restart mid-conversation and does not re-answer old updates", async () => {
    await waitFor(() => standin.isPolling(bot.token), 5000, "a long poll");
    // Telegram never hears that the question was taken: the process stops before confirming it.
    standin.inject("getUpdates", { status: 400, description: "simulated outage" }, 10_000);
    const offer = await ask(ALICE, "show me the feed", 1);
    await runtime!.stop();
    expect(standin.pendingUpdates(bot.token)).toBe(1);
    standin.clearInjected("getUpdates");
    runtime = await start();
    standin.userPresses(bot.token, { from: ALICE, chatId: ALICE.id, messageId: offer.message_id });
    await waitFor(() => messagesTo(ALICE.id).length === 2, 20_000, "the answer after the restart");
    expect(messagesTo(ALICE.id)[1]!.text).toContain(feedList().answer);
    await new Promise((r) => setTimeout(r, 1500));
    expect(messagesTo(ALICE.id)).toHaveLength(2);
    expect(askCalls()).toHaveLength(1);
    expect(standin.pendingUpdates(bot.token)).toBe(0);
    // The command menu did not change, so the restart registered nothing.
    expect(standin.callsTo("setMyCommands", bot.id)).toHaveLength(1);
  });
});
