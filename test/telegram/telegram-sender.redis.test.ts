import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { InboundEvent } from "../../src/core/event.js";
import type { TelegramOrigin } from "../../src/core/origin.js";
import { silentLogger } from "../../src/core/log.js";
import type { Reply, TurnOutcome } from "../../src/core/reply.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { createTelegramBot } from "../../src/telegram/telegram-bot.js";
import { TelegramSender } from "../../src/telegram/telegram-sender.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { RESEND_NOTE, RESEND_NOTE_BEFORE } from "../../src/render/telegram.js";
import { deliverLikeTheScheduler, HeldTurn } from "../support/held-turn.js";
import { staysFalse, waitFor } from "../support/wait.js";

const ALICE = { id: 501, first_name: "Alice" };
const log = silentLogger();
const TYPING_EVERY_MS = 400;
const PRESS_DEADLINE_MS = 300;

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let sender: TelegramSender;

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
  const api = createTelegramBot(bot.token, standin.url).api;
  sender = new TelegramSender(
    new Map([[bot.id, api]]),
    db.keys,
    new RedisRateLimiter(db.redis, db.schedulerKeys),
    log,
    {
      typingEveryMs: TYPING_EVERY_MS,
      pressDeadlineMs: PRESS_DEADLINE_MS,
    },
  );
});
afterEach(async () => db.cleanup());

/** An event as the Telegram adapter makes it: its origin is a Telegram one. */
type TelegramEvent = InboundEvent & { origin: TelegramOrigin };

function question(text = "what's new?", chatId = ALICE.id, threadId?: number): TelegramEvent {
  const { updateId, message } = standin.userSends(bot.token, {
    from: ALICE,
    chat: { id: chatId, type: chatId > 0 ? "private" : "supergroup" },
    text,
    ...(threadId === undefined ? {} : { threadId }),
  });
  return {
    kind: "message",
    text,
    eventId: `tg:${bot.id}:${updateId}`,
    room: `telegram:${bot.id}:${chatId}`,
    namespace: "feed",
    platform: "telegram",
    sender: { id: `tg:${ALICE.id}`, allowed: true },
    addressed: "direct",
    receivedAt: Date.now(),
    origin: {
      platform: "telegram",
      botId: bot.id,
      chatId,
      messageId: message.message_id,
      chatType: chatId > 0 ? "private" : "supergroup",
      userId: ALICE.id,
      ...(threadId === undefined ? {} : { topicId: threadId }),
    },
  };
}

function press(chatId: number, messageId: number): TelegramEvent {
  const { updateId, callbackQueryId } = standin.userPresses(bot.token, { from: ALICE, chatId, messageId });
  return {
    kind: "choice",
    token: "t1",
    eventId: `tg:${bot.id}:${updateId}`,
    room: `telegram:${bot.id}:${chatId}`,
    namespace: "feed",
    platform: "telegram",
    sender: { id: `tg:${ALICE.id}`, allowed: true },
    addressed: "button",
    receivedAt: Date.now(),
    origin: {
      platform: "telegram",
      botId: bot.id,
      chatId,
      messageId,
      callbackQueryId,
      chatType: "private",
      userId: ALICE.id,
    },
  };
}

function answer(
  fields: Partial<{ answer: string; caveat: string; items: { id: string; url?: string }[] }>,
  options: string[] = [],
): Reply {
  return {
    blocks: [
      {
        type: "answer",
        ok: true,
        answer: fields.answer ?? "ok",
        items: fields.items ?? [],
        caveat: fields.caveat ?? null,
      },
    ],
    options: options.map((label, i) => ({ token: `t${i + 1}`, label })),
    ...(options.length > 0 ? { offerId: "offer1" } : {}),
  };
}

/** Delivers as a worker does: through the turn's real gate, waiting out deferrals as the scheduler would. */
async function deliver(event: InboundEvent, outcome: TurnOutcome, turn?: HeldTurn): Promise<string[]> {
  return (await delivered(event, outcome, turn)).refs;
}

async function delivered(event: InboundEvent, outcome: TurnOutcome, turn?: HeldTurn) {
  const held = turn ?? (await HeldTurn.take(db, event.room, log));
  return deliverLikeTheScheduler(held, (t) => sender.deliver(event, outcome, t.context(event.eventId)));
}

describe("TelegramSender", () => {
  it("shows answer, item ids and caveat verbatim, as HTML with previews off, replying to the question", async () => {
    const tricky = `<b>not bold</b> & "quoted" *star* _under_ \`tick\` &amp; 1 < 2 > 0`;
    const event = question();
    const refs = await deliver(event, {
      reply: answer({
        answer: tricky,
        items: [
          { id: "<post&1>", url: "https://example.org/p?a=1&b=2" },
          { id: "local", url: "javascript:alert(1)" },
        ],
        caveat: "<i>beware</i> &lt;",
      }),
    });
    const [message] = standin.botMessages(bot.token, ALICE.id);
    expect(refs).toEqual([`${ALICE.id}:${message!.message_id}`]);
    expect(message!.text).toContain(tricky);
    expect(message!.text).toContain("<post&1>");
    expect(message!.text).toContain("<i>beware</i> &lt;");
    const link = message!.entities!.find((e) => e.type === "text_link");
    expect(link?.url).toBe("https://example.org/p?a=1&b=2");
    expect(message!.text!.slice(link!.offset, link!.offset + link!.length)).toBe("<post&1>");
    expect(message!.entities!.filter((e) => e.type === "text_link")).toHaveLength(1);
    expect(message!.sent).toMatchObject({
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
      reply_to: event.origin.messageId,
    });
  });

  it("delivers a 10,000-character caveat complete across messages, buttons on the last", async () => {
    const lines = Array.from(
      { length: 200 },
      (_, i) => `caveat line ${String(i).padStart(3, "0")} ${"·".repeat(30)}`,
    );
    const caveat = lines.join("\n");
    expect(caveat.length).toBeGreaterThan(9_000);
    const refs = await deliver(question(), {
      reply: answer({ answer: "long one", caveat }, ["more", "less"]),
    });
    const messages = standin.botMessages(bot.token, ALICE.id);
    expect(messages.length).toBeGreaterThan(2);
    expect(refs).toHaveLength(messages.length);
    const all = messages.map((m) => m.text).join("\n");
    for (const line of lines) expect(all).toContain(line);
    expect(messages.slice(0, -1).every((m) => m.reply_markup === undefined)).toBe(true);
    const buttons = messages.at(-1)!.reply_markup!.inline_keyboard.flat();
    expect(buttons.map((b) => b.callback_data)).toEqual(["t1", "t2"]);
    expect(buttons.map((b) => b.text).join(" ")).toMatch(/more.*less/);
    expect(standin.rateViolations).toEqual([]);
  });

  it("tells the person about parts an earlier holder may have sent: below a part, or alone before one too long for it", async () => {
    const event = question();
    // A first part at Telegram's limit, then a short last part with the buttons.
    const words = Array.from({ length: 900 }, (_, i) => `word${i}`).join(" ");
    const outcome = { reply: answer({ answer: words }, ["more", "less"]) };
    const turn = await HeldTurn.take(db, event.room, log);
    // The worker before this one died with both parts' requests out: neither is recorded.
    const earlier = `${Date.now()} other-host/4242/abcd:1`;
    await db.redis.hset(
      db.schedulerKeys.turn(event.room),
      "sending:part:0",
      earlier,
      "sending:part:1",
      earlier,
    );
    await deliver(event, outcome, await turn.again());
    const [note, first, last, ...rest] = standin.botMessages(bot.token, ALICE.id);
    expect(rest).toEqual([]);
    expect(note!.text).toBe(RESEND_NOTE_BEFORE);
    const [firstText, lastText] = [first!.text ?? "", last!.text ?? ""];
    expect(firstText.length).toBeGreaterThan(4096 - RESEND_NOTE.length - 2);
    expect(firstText).not.toContain(RESEND_NOTE);
    expect(`${firstText} ${lastText.split("\n\n")[0]}`).toContain(words);
    expect(lastText.endsWith(`\n\n${RESEND_NOTE}`)).toBe(true);
    expect(last!.reply_markup!.inline_keyboard.flat().map((b) => b.callback_data)).toEqual(["t1", "t2"]);
  });

  it("defers the turn on a 429 and fails it over on a 502; retried, every message arrives once", async () => {
    standin.inject("sendMessage", { status: 429, retryAfter: 1 }, 4);
    standin.inject("sendMessage", { status: 502 });
    const chats = [701, 702, 703];
    const results = await Promise.all(
      chats.map((chat) => delivered(question("q", chat), { reply: answer({ answer: `for ${chat}` }) })),
    );
    // The 429s sent nothing: their parts arrive once, as they are. A 502 may come from a proxy
    // after Telegram took the message, so the part it failed is sent again with the note.
    const texts = chats.map((chat) => standin.botMessages(bot.token, chat).map((m) => m.text));
    const noted = chats.filter((chat, i) => texts[i]![0] === `for ${chat}\n\n${RESEND_NOTE}`);
    expect(noted).toHaveLength(1);
    for (const [i, chat] of chats.entries())
      expect(texts[i]).toEqual([noted.includes(chat) ? `for ${chat}\n\n${RESEND_NOTE}` : `for ${chat}`]);
    // Nothing is retried inside the sender: each refusal went back to the scheduler once.
    const refused = standin.callsTo("sendMessage", bot.id).filter((c) => !c.ok).length;
    expect(refused).toBe(5);
    // The 502 failed one attempt; the 429s (and the chat windows they held) deferred the others.
    expect(results.reduce((n, r) => n + r.failed, 0)).toBe(1);
    expect(results.reduce((n, r) => n + r.deferred, 0)).toBeGreaterThanOrEqual(4);
    expect(standin.rateViolations).toEqual([]);
  }, 30_000);

  it("resends a part as plain text when Telegram cannot parse its markup", async () => {
    standin.inject("sendMessage", {
      status: 400,
      description: `can't parse entities: Unsupported start tag "x" at byte offset 0`,
    });
    const text = `a <b> & "c" <post>`;
    await deliver(question(), {
      reply: answer({ answer: text, items: [{ id: "i&1", url: "https://e.org" }] }),
    });
    const [message] = standin.botMessages(bot.token, ALICE.id);
    expect(message!.sent!.parse_mode).toBeUndefined();
    expect(message!.text).toContain(text);
    expect(message!.text).toContain("i&1");
  });

  it("answers every press, marks the chosen option on the offer, then sends the answer", async () => {
    const [offerRef] = await deliver(question("show me the feed"), {
      reply: answer({ answer: "Which one?" }, ["feed.latest", "feed.top"]),
    });
    const offerId = Number(offerRef!.split(":")[1]);
    const event = press(ALICE.id, offerId);
    await deliver(event, {
      reply: answer({ answer: "latest posts" }),
      toast: "Chosen: feed.latest",
      chosen: { offerId: "offer1", label: "feed.latest", messageRefs: [offerRef!] },
    });
    expect(standin.callbackAnswer(String(event.origin.callbackQueryId))).toMatchObject({
      text: "Chosen: feed.latest",
    });
    const [offer, reply] = standin.botMessages(bot.token, ALICE.id);
    expect(offer!.reply_markup!.inline_keyboard).toEqual([
      [{ text: "✅ feed.latest", callback_data: "rg:chosen" }],
    ]);
    expect(reply!.text).toBe("latest posts");
  });

  it("answers a press that has no reply (a stranger's, a stale one) with just the toast", async () => {
    const [offerRef] = await deliver(question(), { reply: answer({ answer: "Which?" }, ["a"]) });
    const event = press(ALICE.id, Number(offerRef!.split(":")[1]));
    expect(await deliver(event, { reply: null, toast: "You are not allowed to use this bot." })).toEqual([]);
    expect(standin.callbackAnswer(String(event.origin.callbackQueryId))).toMatchObject({
      text: "You are not allowed to use this bot.",
    });
    expect(standin.botMessages(bot.token, ALICE.id)).toHaveLength(1);
  });

  it("sends each part once when a turn is delivered again (the turn record in Redis)", async () => {
    const event = question();
    const outcome = { reply: answer({ answer: "once", caveat: "x\n".repeat(3000) }) };
    const { refs: first, turn } = await delivered(event, outcome);
    const again = await deliver(event, outcome, await turn.again());
    expect(again).toEqual(first);
    expect(standin.botMessages(bot.token, ALICE.id)).toHaveLength(first.length);
  });

  it("answers in the forum topic the question came from", async () => {
    const event = question("/status", -100500, 77);
    await deliver(event, { reply: answer({ answer: "in topic" }) });
    expect(standin.botMessages(bot.token, -100500, 77).map((m) => m.text)).toEqual(["in topic"]);
  });

  it("shows typing until the turn ends, refreshed while it runs", async () => {
    const typing = () => standin.callsTo("sendChatAction", bot.id);
    const stop = sender.working(question());
    await waitFor(() => typing().length >= 2, undefined, "typing refreshed");
    stop();
    expect(typing()[0]!.params).toMatchObject({ action: "typing", chat_id: ALICE.id });
    // One call may still be on its way; none is started after the turn ended. Only the
    // refresh timer could start one, so watch for a few of its periods.
    const sent = typing().length;
    await staysFalse(() => typing().length > sent + 1, 3 * TYPING_EVERY_MS, "typing after the turn ended");
  });

  it("answers a press whose turn runs long before Telegram gives up on it, and the turn still ends well", async () => {
    const [offerRef] = await deliver(question(), { reply: answer({ answer: "Which?" }, ["a"]) });
    const event = press(ALICE.id, Number(offerRef!.split(":")[1]));
    const stop = sender.working(event);
    const early = await waitFor(
      () => standin.callbackAnswer(String(event.origin.callbackQueryId)),
      undefined,
      "the press answered before Telegram's deadline",
    );
    stop();
    expect(early).toEqual({});
    await deliver(event, { reply: answer({ answer: "slow answer" }), toast: "Chosen: a" });
    expect(standin.botMessages(bot.token, ALICE.id).at(-1)!.text).toBe("slow answer");
  });

  it("leaves a quick press to be answered with its toast", async () => {
    const [offerRef] = await deliver(question(), { reply: answer({ answer: "Which?" }, ["a"]) });
    const event = press(ALICE.id, Number(offerRef!.split(":")[1]));
    sender.working(event)();
    // Only the stopped deadline timer could answer it early: watch past its time.
    await staysFalse(
      () => standin.callbackAnswer(String(event.origin.callbackQueryId)) !== undefined,
      2 * PRESS_DEADLINE_MS,
      "an early answer to a quick press",
    );
    await deliver(event, { reply: null, toast: "Chosen: a" });
    expect(standin.callbackAnswer(String(event.origin.callbackQueryId))).toEqual({ text: "Chosen: a" });
  });
});
