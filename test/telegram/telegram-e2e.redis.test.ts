import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { telegramRoom } from "../../src/core/room.js";
import { feedDigest, feedItem, feedList } from "../../src/demo/feed.js";
import { FEED_ITEMS } from "../../src/demo/fixtures.js";
import type { Runtime } from "../../src/runtime.js";
import { callsIn, DEMO_SERVER } from "../support/spine.js";
import type { StandinUser } from "../support/telegram-api-standin.js";
import { telegramWorld } from "../support/telegram-world.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 801, first_name: "Alice" };
const BOB: StandinUser = { id: 802, first_name: "Bob" };
const MALLORY: StandinUser = { id: 866, first_name: "Mallory" };
const GROUP = { id: -100800, type: "supergroup" as const, title: "Ops" };
const world = telegramWorld({ perChatRate: true, username: "feed_standin_bot", fresh: "test" });
let callLog: string;
let runtime: Runtime;

beforeEach(async () => {
  callLog = join(mkdtempSync(join(tmpdir(), "roomgate-tg-calls-")), "calls.log");
  runtime = await start();
});

/** Starts one roomgate process: Telegram receiver and sender, workers, the demo feed server. */
function start(): Promise<Runtime> {
  const config = world.config({
    namespaces: {
      feed: {
        command: [process.execPath, DEMO_SERVER],
        env: { ATTEST_TOOLS: "feed", DEMO_CALL_LOG: callLog },
      },
    },
    bot: { users: [ALICE.id, BOB.id], groups: [{ chat: GROUP.id, users: [ALICE.id] }] },
  });
  return world.start(config);
}

const messagesTo = (chatId: number) => world.standin.botMessages(world.bot.token, chatId);

async function ask(from: StandinUser, text: string, count: number) {
  world.standin.userSends(world.bot.token, { from, text });
  await waitFor(() => messagesTo(from.id).length >= count, 20_000, `reply ${count} to ${from.first_name}`);
  return messagesTo(from.id).at(-1)!;
}

/**
 * The barrier before a check that nothing more is answered: every update sent so far is
 * handled at the edge, and every turn it queued in these chats is answered.
 */
async function settled(...chats: number[]): Promise<void> {
  await waitFor(() => world.standin.pendingUpdates(world.bot.token) === 0, undefined, "the updates taken");
  for (const chat of chats)
    await waitFor(
      () => world.db.drained(telegramRoom(world.bot.id, chat)),
      undefined,
      `chat ${chat} drained`,
    );
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
    expect(world.standin.commands(world.bot.token).map((c) => c.command)).toContain("tools");
    // Typing is shown only once a turn has run for about a second, never for a quick answer.
    for (const typing of world.standin.callsTo("sendChatAction", world.bot.id))
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
    const forged = world.standin.userPresses(world.bot.token, {
      from: BOB,
      chatId: BOB.id,
      messageId: messagesTo(BOB.id)[0]!.message_id,
      data: token,
    });
    await waitFor(
      () => world.standin.callbackAnswer(forged.callbackQueryId),
      20_000,
      "the forged press's answer",
    );
    expect(String(world.standin.callbackAnswer(forged.callbackQueryId)!.text)).toMatch(/not known here/);
    const callsBefore = callsIn(callLog).length;

    const pressed = world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
    });
    await waitFor(() => messagesTo(ALICE.id).length === 2, 20_000, "the chosen tool's answer");
    expect(messagesTo(ALICE.id)[1]!.text).toContain(feedList().answer);
    expect(world.standin.callbackAnswer(pressed.callbackQueryId)).toMatchObject({ text: `Chosen: ${label}` });
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
    const again = world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
      data: token,
    });
    await waitFor(
      () => world.standin.callbackAnswer(again.callbackQueryId),
      20_000,
      "the second press's answer",
    );
    expect(String(world.standin.callbackAnswer(again.callbackQueryId)!.text)).toMatch(/already made/);
    // The ✅ button itself is answered on the spot.
    const tick = world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
    });
    await waitFor(() => world.standin.callbackAnswer(tick.callbackQueryId), 5000, "the ✅ press's answer");
    await settled(ALICE.id);
    expect(messagesTo(ALICE.id)).toHaveLength(2);
    expect(callsIn(callLog).slice(callsBefore)).toHaveLength(1);
  });

  it("never lets a stranger reach the namespace: one refusal, and a refusal toast for presses", async () => {
    await ask(ALICE, "what's new?", 1);
    const callsBefore = callsIn(callLog).length;
    const refusal = await ask(MALLORY, "what's new?", 1);
    expect(refusal.text).toMatch(/not allowed/);
    world.standin.userSends(world.bot.token, { from: MALLORY, text: "please?" });
    // In a listed group Mallory is not on the group's list either.
    world.standin.userSends(world.bot.token, {
      from: MALLORY,
      chat: GROUP,
      text: "@feed_standin_bot what's new?",
    });
    const press = world.standin.userPresses(world.bot.token, {
      from: MALLORY,
      chatId: MALLORY.id,
      messageId: refusal.message_id,
      data: "x",
    });
    await waitFor(
      () => world.standin.callbackAnswer(press.callbackQueryId),
      20_000,
      "the stranger's press answer",
    );
    expect(String(world.standin.callbackAnswer(press.callbackQueryId)!.text)).toMatch(/not allowed/);
    await settled(MALLORY.id, GROUP.id);
    expect(messagesTo(MALLORY.id)).toHaveLength(1);
    expect(callsIn(callLog).length).toBe(callsBefore);
  });

  it("fills an asked-for argument from a text document and refuses other files clearly", async () => {
    const offer = await ask(ALICE, "hello", 1);
    const itemButton = offer.reply_markup!.inline_keyboard.flat().find((b) => b.text.includes("feed.item"))!;
    world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
      data: itemButton.callback_data!,
    });
    await waitFor(() => messagesTo(ALICE.id).length === 2, 20_000, "the question for the id");
    expect(messagesTo(ALICE.id)[1]!.text).toMatch(/I need id: /);

    const pdf = world.standin.addFile({ name: "paper.pdf", mime: "application/pdf", content: "%PDF-1.4" });
    world.standin.userSends(world.bot.token, { from: ALICE, document: pdf });
    await waitFor(() => messagesTo(ALICE.id).length === 3, 20_000, "the refusal");
    expect(messagesTo(ALICE.id)[2]!.text).toMatch(/I cannot use that file: "paper\.pdf" is not a text file/);

    const id = FEED_ITEMS[0]!.id;
    const note = world.standin.addFile({ name: "id.txt", mime: "application/octet-stream", content: id });
    world.standin.userSends(world.bot.token, { from: ALICE, document: note });
    await waitFor(() => messagesTo(ALICE.id).length === 4, 20_000, "the item");
    expect(messagesTo(ALICE.id)[3]!.text).toContain(feedItem(id).answer);
    expect(world.standin.callsTo("getFile", world.bot.id)).toHaveLength(1);
  });

  it("answers commands and mentions in a listed group, each forum topic its own room", async () => {
    world.standin.userSends(world.bot.token, { from: ALICE, chat: GROUP, text: "chatting among ourselves" });
    world.standin.userSends(world.bot.token, {
      from: ALICE,
      chat: GROUP,
      text: "@feed_standin_bot what's new?",
      threadId: 5,
    });
    await waitFor(
      () => world.standin.botMessages(world.bot.token, GROUP.id, 5).length === 1,
      20_000,
      "the topic answer",
    );
    expect(world.standin.botMessages(world.bot.token, GROUP.id, 5)[0]!.text).toContain(feedList().answer);
    expect(messagesTo(GROUP.id)).toHaveLength(1);
    expect(askCalls()).toHaveLength(1);
  });

  it("keeps the conversation across a restart mid-conversation and does not re-answer old updates", async () => {
    await waitFor(() => world.standin.isPolling(world.bot.token), 5000, "a long poll");
    // Telegram never hears that the question was taken: the process stops before confirming it.
    world.standin.inject("getUpdates", { status: 400, description: "simulated outage" }, 10_000);
    const offer = await ask(ALICE, "show me the feed", 1);
    await world.stop(runtime);
    expect(world.standin.pendingUpdates(world.bot.token)).toBe(1);
    world.standin.clearInjected("getUpdates");
    runtime = await start();
    world.standin.userPresses(world.bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: offer.message_id,
    });
    await waitFor(() => messagesTo(ALICE.id).length === 2, 20_000, "the answer after the restart");
    expect(messagesTo(ALICE.id)[1]!.text).toContain(feedList().answer);
    await settled(ALICE.id);
    expect(messagesTo(ALICE.id)).toHaveLength(2);
    expect(askCalls()).toHaveLength(1);
    expect(world.standin.pendingUpdates(world.bot.token)).toBe(0);
    // The command menu did not change, so the restart registered nothing.
    expect(world.standin.callsTo("setMyCommands", world.bot.id)).toHaveLength(1);
  });
});
