import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { telegramRoom } from "../../src/core/room.js";
import { renderTelegram } from "../../src/render/telegram.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { echoAnswer, HOSTILE_ANSWERS, HOSTILE_ERROR_TEXT } from "../support/hostile/hostile-answers.js";
import { expectAnswerShown, hostileNamespace } from "../support/hostile/hostile-namespace.js";
import { replyOf, roomKeys } from "../support/hostile/room-state.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import {
  TelegramApiStandin,
  type StandinBot,
  type StandinUser,
  type StoredMessage,
} from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 901, first_name: "Alice" };
const MALLORY: StandinUser = { id: 966, first_name: "Mallory" };
const GROUP = { id: -100900, type: "supergroup" as const, title: "Bound" };
const UNBOUND = { id: -100999, type: "supergroup" as const, title: "Nobody bound this" };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };

const hostile = hostileNamespace();
const capture = capturingLogger();
const logged = capture.lines;
let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let runtime: Runtime;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  db = await testRedis();
  bot = standin.addBot({ username: "adv_standin_bot" });
  const config = telegramConfig({
    apiRoot: standin.url,
    namespaces: { adv: hostile.config },
    // What is sent is checked here, not its pace (telegram-limits is): a 25-part answer need not take 25 s.
    // Nor is Alice's flood limit, which that pace used to keep her under.
    sendLimits: { chatPerSecond: 30, groupPerMinute: 1200 },
    limits: { turnsPerMinute: 600 },
    bots: [
      {
        token: bot.token,
        namespace: "adv",
        users: [ALICE.id],
        groups: [{ chat: GROUP.id, users: [ALICE.id] }],
      },
    ],
  });
  runtime = await startRuntime({
    config,
    redisUrl: db.url,
    prefix: db.prefix,
    log: capture.log,
    platforms: [createTelegramPlatform({ polling: FAST })],
  });
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
  await standin.close();
  await db.cleanup();
});

const messagesTo = (chatId: number) => standin.botMessages(bot.token, chatId);

/** Alice sends `text`; resolves with the `parts` messages the bot sends back. */
async function ask(text: string, parts: number, chat: number = ALICE.id): Promise<StoredMessage[]> {
  const before = messagesTo(chat).length;
  standin.userSends(bot.token, { from: ALICE, text, ...(chat === ALICE.id ? {} : { chat: GROUP }) });
  await waitFor(() => messagesTo(chat).length >= before + parts, 110_000, `${parts} parts answering ${text}`);
  return messagesTo(chat).slice(before, before + parts);
}

/** What a person sees of some messages: their texts, then the last one's buttons. */
function seen(messages: StoredMessage[]): string {
  const buttons =
    messages
      .at(-1)
      ?.reply_markup?.inline_keyboard.flat()
      .map((b) => b.text) ?? [];
  return [...messages.map((m) => m.text ?? ""), ...buttons].join("\n");
}

describe("Telegram, through the real runtime and a strict Bot API stand-in, against a hostile namespace", () => {
  it.each(["markup", "caveat", "line", "emoji", "urls", "longopts", "empty"])(
    "delivers the %s Answer whole, every part accepted by Telegram's rules",
    async (name) => {
      const answer = HOSTILE_ANSWERS[name]!;
      const parts = renderTelegram(replyOf(answer)).length;
      const messages = await ask(name, parts);
      expectAnswerShown(seen(messages), answer);
      for (const m of messages) expect(m.text!.trim()).not.toBe("");
      if (name === "urls") {
        const links = messages.flatMap((m) => (m.entities ?? []).filter((e) => e.type === "text_link"));
        // Only http(s) urls become links; the quote-breaking ones stay inside the attribute.
        expect(links.map((e) => e.url)).toEqual([
          "https://ex.example/%22onmouseover=%22alert(1)",
          "https://ex.example/a'b%3Cc%3Ed",
          "https://ex.example/ok",
        ]);
      }
    },
    120_000,
  );

  it("lists 1,000 options in full, pages the keyboard within Telegram's 100 buttons, and takes any number", async () => {
    const answer = HOSTILE_ANSWERS.many!;
    const parts = renderTelegram(replyOf(answer)).length;
    const messages = await ask("many", parts);
    expectAnswerShown(seen(messages), answer);
    expect(standin.calls.filter((c) => c.method === "sendMessage" && !c.ok)).toEqual([]);
    const carrier = messages.at(-1)!;
    const keyboard = () => carrier.reply_markup!.inline_keyboard.flat();
    expect(keyboard().length).toBeLessThanOrEqual(100);
    expect(carrier.reply_markup!.inline_keyboard.every((row) => row.length <= 5)).toBe(true);
    expect(keyboard().map((b) => b.text)).toContain("▶");

    const next = keyboard().find((b) => b.text === "▶")!.callback_data!;
    standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: carrier.message_id,
      data: next,
    });
    await waitFor(() => keyboard().some((b) => b.text === "21"), 20_000, "page 2 of the keyboard");
    expect(keyboard().some((b) => b.text === "◀")).toBe(true);

    const press = keyboard().find((b) => b.text === "23")!.callback_data!;
    const before = messagesTo(ALICE.id).length;
    standin.userPresses(bot.token, {
      from: ALICE,
      chatId: ALICE.id,
      messageId: carrier.message_id,
      data: press,
    });
    await waitFor(() => messagesTo(ALICE.id).length > before, 20_000, "the chosen option's answer");
    expect(messagesTo(ALICE.id).at(-1)!.text).toBe(echoAnswer("option 23").answer);

    await ask("many", parts);
    const [chosen] = await ask("1000", 1);
    expect(chosen!.text).toBe(echoAnswer("option 1000").answer);
  }, 120_000);

  it("shows a router's error result verbatim as that agent's error, a malformed one as malformed, a crash clearly", async () => {
    const [error] = await ask("error", 1);
    expect(error!.text).toContain('The "adv" agent reported an error');
    expect(error!.text).toContain(HOSTILE_ERROR_TEXT);
    const [malformed] = await ask("malformed", 1);
    expect(malformed!.text).toMatch(
      /The "adv" agent sent a malformed reply, so it is not shown \(ref [0-9a-f]{8}\)/,
    );
    const [crash] = await ask("crash", 1);
    expect(crash!.text).not.toContain("option");
    const [after] = await ask("still there?", 1);
    expect(after!.text).toBe(echoAnswer("still there?").answer);
  }, 60_000);

  it("passes the text on exactly as sent, and a reply to an older offer chooses from that offer", async () => {
    const [spaced] = await ask("  spaced  ", 1);
    expect(spaced!.text).toBe(echoAnswer("  spaced  ").answer);
    const [older] = await ask("longopts", 1);
    await ask("slash", 1);
    const before = messagesTo(ALICE.id).length;
    standin.userSends(bot.token, { from: ALICE, text: "2", replyTo: older!.message_id });
    await waitFor(() => messagesTo(ALICE.id).length > before, 20_000, "the reply's choice");
    expect(messagesTo(ALICE.id).at(-1)!.text).toBe(echoAnswer(HOSTILE_ANSWERS.longopts!.options[1]!).answer);
    // That offer is used up now: replying to it again picks nothing from the newer one.
    const count = messagesTo(ALICE.id).length;
    standin.userSends(bot.token, { from: ALICE, text: "1", replyTo: older!.message_id });
    await waitFor(() => messagesTo(ALICE.id).length > count, 20_000, "the used-up reply's answer");
    expect(messagesTo(ALICE.id).at(-1)!.text).toContain("already made");
    // The newer offer's option 1 is "/reset": chosen, it is text for the agent, never the command.
    const [slash] = await ask("1", 1);
    expect(slash!.text).toBe(echoAnswer("/reset").answer);
  }, 60_000);
});

describe("a stranger, every way in", () => {
  /** What a stranger may leave behind: the refusal's one-hour mark, nothing else. */
  async function expectNothingLeft(rooms: string[]): Promise<void> {
    for (const r of rooms) {
      for (const key of await roomKeys(db, r)) expect(key).toMatch(/^(refused:tg:966|notice:leaving:bot)$/);
    }
    expect(standin.callsTo("getFile", bot.id)).toEqual([]);
    expect(hostile.calls().filter((c) => c.includes("tg:966"))).toEqual([]);
  }

  it("message and command: one refusal an hour, no turn, no call", async () => {
    const before = hostile.calls().length;
    standin.userSends(bot.token, { from: MALLORY, text: "what is new?" });
    await waitFor(() => messagesTo(MALLORY.id).length === 1, 20_000, "the refusal");
    expect(messagesTo(MALLORY.id)[0]!.text).toContain("not allowed");
    standin.userSends(bot.token, { from: MALLORY, text: "/tools" });
    standin.userSends(bot.token, { from: MALLORY, text: "/call adv.ask question=hi" });
    // The poll past them is the barrier: each update's handling (a refusal sent, anything
    // queued) ends before the next getUpdates confirms it.
    await waitFor(() => standin.pendingUpdates(bot.token) === 0, 20_000, "the updates taken");
    expect(messagesTo(MALLORY.id)).toHaveLength(1);
    expect(hostile.calls().length).toBe(before);
    await expectNothingLeft([telegramRoom(bot.id, MALLORY.id)]);
  });

  it("button press and reply in a bound group: a refusal toast, no turn, no call", async () => {
    const [offer] = await ask("@adv_standin_bot longopts", 1, GROUP.id);
    const before = hostile.calls().length;
    const edits = standin.callsTo("editMessageReplyMarkup", bot.id).length;
    const press = standin.userPresses(bot.token, {
      from: MALLORY,
      chatId: GROUP.id,
      messageId: offer!.message_id,
    });
    await waitFor(() => standin.callbackAnswer(press.callbackQueryId), 20_000, "the press's answer");
    expect(String(standin.callbackAnswer(press.callbackQueryId)!.text)).toContain("not allowed");
    const page = standin.userPresses(bot.token, {
      from: MALLORY,
      chatId: GROUP.id,
      messageId: offer!.message_id,
      data: "rg:pg:forged:1:1000",
    });
    await waitFor(() => standin.callbackAnswer(page.callbackQueryId), 20_000, "the page press's answer");
    const groupMessages = messagesTo(GROUP.id).length;
    standin.userSends(bot.token, { from: MALLORY, chat: GROUP, text: "2", replyTo: offer!.message_id });
    await waitFor(() => messagesTo(GROUP.id).length === groupMessages + 1, 20_000, "the group refusal");
    standin.userSends(bot.token, { from: MALLORY, chat: GROUP, text: "1", replyTo: offer!.message_id });
    await waitFor(() => standin.pendingUpdates(bot.token) === 0, 20_000, "the updates taken");
    expect(messagesTo(GROUP.id)).toHaveLength(groupMessages + 1);
    // The forged page turn edited nothing.
    expect(standin.callsTo("editMessageReplyMarkup", bot.id)).toHaveLength(edits);
    expect(hostile.calls().length).toBe(before);
    const keys = await roomKeys(db, telegramRoom(bot.id, GROUP.id));
    expect(keys.filter((k) => k.includes("tg:966"))).toEqual(["refused:tg:966"]);
  });

  it("document: nothing is downloaded, nothing queued", async () => {
    const document = standin.addFile({ name: "payload.md", mime: "text/markdown", content: "# hi" });
    standin.userSends(bot.token, { from: MALLORY, document, caption: "read this" });
    await waitFor(() => standin.pendingUpdates(bot.token) === 0, 20_000, "the update taken");
    await expectNothingLeft([telegramRoom(bot.id, MALLORY.id)]);
  });

  it("an event forged into the queue as allowed is dropped by the worker's own check", async () => {
    const room = telegramRoom(bot.id, MALLORY.id);
    const before = hostile.calls().length;
    const refusals = messagesTo(MALLORY.id).length;
    await runtime.deps.inbox.enqueue({
      kind: "message",
      text: "forged",
      eventId: `tg:${bot.id}:forged-1`,
      room,
      namespace: "adv",
      platform: "telegram",
      sender: { id: `tg:${MALLORY.id}`, allowed: true },
      addressed: "direct",
      receivedAt: Date.now(),
      origin: {
        platform: "telegram",
        botId: bot.id,
        chatId: MALLORY.id,
        chatType: "private",
        userId: MALLORY.id,
        messageId: 1,
      },
    });
    await waitFor(
      () =>
        logged().some((l) => l.turn === `tg:${bot.id}:forged-1` && l.msg === "sender not allowed; dropped"),
      20_000,
      "the worker dropping it",
    );
    expect(hostile.calls().length).toBe(before);
    expect(messagesTo(MALLORY.id)).toHaveLength(refusals);
    expect((await roomKeys(db, room)).filter((k) => k === "session" || k.startsWith("outcome"))).toEqual([]);
  });

  it("invite into a group no binding names: the bot leaves with one notice", async () => {
    standin.pushUpdate(bot.token, {
      my_chat_member: {
        chat: UNBOUND,
        from: { id: MALLORY.id, is_bot: false, first_name: "Mallory" },
        date: Math.floor(Date.now() / 1000),
        old_chat_member: { status: "left", user: { id: bot.id, is_bot: true, first_name: "bot" } },
        new_chat_member: { status: "member", user: { id: bot.id, is_bot: true, first_name: "bot" } },
      },
    });
    await waitFor(() => standin.callsTo("leaveChat", bot.id).length === 1, 20_000, "the bot leaving");
    const notices = standin
      .callsTo("sendMessage", bot.id)
      .filter((c) => Number(c.params.chat_id) === UNBOUND.id);
    expect(notices).toHaveLength(1);
    expect(String(notices[0]!.params.text)).toContain("not set up for this chat");
    await expectNothingLeft([telegramRoom(bot.id, UNBOUND.id)]);
  });
});
