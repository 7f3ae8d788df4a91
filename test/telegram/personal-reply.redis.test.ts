import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { InboundEvent } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import type { Reply, TurnOutcome } from "../../src/core/reply.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { createTelegramBot } from "../../src/telegram/telegram-bot.js";
import { TelegramSender } from "../../src/telegram/telegram-sender.js";
import { deliverLikeTheScheduler, HeldTurn } from "../support/held-turn.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";

// A reply asked of one member (Reply.personal) on Telegram: an ephemeral message to
// them in a group (in reply to their press when the turn is one), the room's note
// beside it; refused by Telegram, the room gets the reply as before.

const ALICE = { id: 2611, first_name: "Alice" };
const CAROL = { id: 2613, first_name: "Carol" };
const GROUP = { id: -1002610, type: "supergroup" as const, title: "Team" };
const log = silentLogger();

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let sender: TelegramSender;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
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
  );
});
afterEach(async () => db.cleanup());

const origin = (userId: number, extra: { messageId?: number; callbackQueryId?: string } = {}) =>
  ({
    platform: "telegram",
    botId: bot.id,
    chatId: GROUP.id,
    chatType: "supergroup",
    userId,
    ...extra,
  }) as const;

function event(
  kind: "message" | "choice",
  userId: number,
  extra: Parameters<typeof origin>[1],
): InboundEvent {
  const base = {
    eventId: `tg:${bot.id}:${Math.random()}`,
    room: `telegram:${bot.id}:${GROUP.id}`,
    namespace: "h",
    platform: "telegram" as const,
    sender: { id: `tg:${userId}`, allowed: true },
    receivedAt: Date.now(),
    origin: origin(userId, extra),
  };
  return kind === "message"
    ? { ...base, kind, text: "/call h.wipe", addressed: "command" }
    : { ...base, kind, token: "t1", addressed: "button" };
}

const personal = (userId: number): Reply => ({
  blocks: [{ type: "text", text: "h.wipe waits for your approval" }],
  options: [
    { token: "a1", label: "Approve" },
    { token: "d1", label: "Deny" },
  ],
  offerId: "o1",
  personal: { to: { id: `tg:${userId}`, name: "Alice" }, note: "Waiting for an approval from Alice." },
});

async function deliver(e: InboundEvent, outcome: TurnOutcome): Promise<string[]> {
  const held = await HeldTurn.take(db, e.room, log);
  return (await deliverLikeTheScheduler(held, (t) => sender.deliver(e, outcome, t.context(e.eventId)))).refs;
}

describe("a reply for one member of a Telegram group", () => {
  it("goes to them alone, in reply to their press; the room sees the note", async () => {
    const { message } = standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "colour?" });
    const offered = await createTelegramBot(bot.token, standin.url).api.sendMessage(GROUP.id, "pick", {
      reply_markup: { inline_keyboard: [[{ text: "red", callback_data: "t1" }]] },
    });
    const { callbackQueryId } = standin.userPresses(bot.token, {
      from: ALICE,
      chatId: GROUP.id,
      messageId: offered.message_id,
    });
    const pressed = event("choice", ALICE.id, { messageId: message.message_id, callbackQueryId });
    const refs = await deliver(pressed, { reply: personal(ALICE.id) });
    expect(refs).toEqual([`${GROUP.id}:eph:${ALICE.id}:1`]);
    const sent = standin.callsTo("sendMessage").find((c) => c.params.ephemeral_message_parameters);
    expect(sent?.params.ephemeral_message_parameters).toEqual({
      receiver_user_id: ALICE.id,
      callback_query_id: callbackQueryId,
    });
    const alices = standin.visibleTo(bot.token, GROUP.id, ALICE.id).map((m) => m.text);
    expect(alices).toContain("h.wipe waits for your approval");
    expect(standin.botMessages(bot.token, GROUP.id).map((m) => m.text)).toEqual([
      "pick",
      "Waiting for an approval from Alice.",
    ]);
  });

  it("goes to the room as before, buttons and all, when Telegram refuses it", async () => {
    // Carol never wrote in the group: the stand-in, like Telegram, refuses a message for her there.
    const asked = event("message", CAROL.id, {});
    const outcome = { reply: personal(CAROL.id) };
    const refs = await deliver(asked, outcome);
    const shown = standin.botMessages(bot.token, GROUP.id);
    expect(shown.map((m) => m.text)).toEqual(["h.wipe waits for your approval"]);
    expect(shown[0]!.reply_markup?.inline_keyboard.flat().map((b) => b.text)).toEqual([
      "1. Approve",
      "2. Deny",
    ]);
    expect(refs).toEqual([`${GROUP.id}:${shown[0]!.message_id}`]);
  });
});
