import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/core/log.js";
import { FloodGate } from "../../../src/scheduler/flood-gate.js";
import { OrderedReads } from "../../../src/edge/ordered-reads.js";
import { StrangerGate } from "../../../src/edge/stranger-gate.js";
import { CHOSEN_BUTTON_DATA, pageData } from "../../../src/render/telegram-keyboard.js";
import { binding } from "../../../src/telegram/edge/binding.js";
import { EdgeContext, EdgeOrderError } from "../../../src/telegram/edge/edge-context.js";
import { edit } from "../../../src/telegram/edge/edit.js";
import { enqueue } from "../../../src/telegram/edge/enqueue.js";
import { membership } from "../../../src/telegram/edge/membership.js";
import { pageTurn } from "../../../src/telegram/edge/page-turn.js";
import { spentPress } from "../../../src/telegram/edge/spent-press.js";
import { stranger } from "../../../src/telegram/edge/stranger.js";
import type { BotIdentity } from "../../../src/telegram/edge-record.js";
import { createTelegramBot } from "../../../src/telegram/telegram-bot.js";
import { testRedis, type TestRedis } from "../../support/redis.js";
import { TelegramApiStandin, type StandinBot } from "../../support/telegram-api-standin.js";
import { RecordingInbox } from "../../support/telegram-fixtures.js";

const ALICE = { id: 701, first_name: "Alice" };
const MALLORY = { id: 766, first_name: "Mallory" };
const GROUP = { id: -100701, type: "supergroup" as const, title: "Ops" };
const UNBOUND = { id: -100799, type: "supergroup" as const, title: "Elsewhere" };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let grammy: Bot;
let inbox: RecordingInbox;
let offset = 0;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot();
  grammy = createTelegramBot(bot.token, standin.url);
  await grammy.init();
  inbox = new RecordingInbox();
  offset = 0;
});
afterEach(async () => db.cleanup());

function identity(extra: Partial<BotIdentity> = {}): BotIdentity {
  return {
    id: bot.id,
    username: bot.username,
    config: {
      token: bot.token,
      namespace: "feed",
      users: [ALICE.id],
      topics: [],
      groups: [{ chat: GROUP.id, users: [ALICE.id], topics: {} }],
    },
    ...extra,
  };
}

/** The next update the stand-in holds for the bot, read as the receivers read it. */
async function nextUpdate(): Promise<Update> {
  const [update] = await grammy.api.getUpdates({ offset, timeout: 0 });
  if (!update) throw new Error("no update waiting");
  offset = update.update_id + 1;
  return update;
}

/** A context for one update, with the edge parts of one bot: what a step alone is run with. */
function contextOf(update: Update, who: BotIdentity = identity()): EdgeContext {
  const log = silentLogger();
  return new EdgeContext(update, grammy.api, grammy.botInfo, {
    identity: who,
    inbox,
    keys: db.keys,
    flood: new FloodGate(db.scheduler, { turnsPerMinute: 100, roomQueueCap: 100 }),
    log,
    strangers: new StrangerGate(db.redis),
    readDocument: () => Promise.reject(new Error("no document expected")),
    reads: new OrderedReads<number>(),
  });
}

/** Runs one step alone and says whether it handed the update on. */
async function run(
  step: (ctx: EdgeContext, next: () => Promise<void>) => Promise<void>,
  ctx: EdgeContext,
): Promise<boolean> {
  let passed = 0;
  await step(ctx, async () => {
    passed++;
  });
  expect(passed).toBeLessThanOrEqual(1);
  return passed === 1;
}

describe("the Telegram edge, one step at a time", () => {
  it("membership: leaves a group no binding names, with one notice, and passes other updates on", async () => {
    standin.pushUpdate(bot.token, {
      my_chat_member: {
        chat: UNBOUND,
        from: { is_bot: false, ...ALICE },
        date: 1,
        old_chat_member: { status: "left", user: { id: bot.id, is_bot: true, first_name: "b" } },
        new_chat_member: { status: "member", user: { id: bot.id, is_bot: true, first_name: "b" } },
      },
    });
    expect(await run(membership, contextOf(await nextUpdate()))).toBe(false);
    expect(standin.callsTo("leaveChat", bot.id).map((c) => c.params.chat_id)).toEqual([UNBOUND.id]);
    expect(standin.callsTo("sendMessage", bot.id)).toHaveLength(1);

    standin.userSends(bot.token, { from: ALICE, text: "hello" });
    expect(await run(membership, contextOf(await nextUpdate()))).toBe(true);
  });

  it("edit: an edit is dropped unless edits.reask takes it, then it goes on as a message", async () => {
    const { message } = standin.userSends(bot.token, { from: ALICE, text: "first" });
    await nextUpdate();
    standin.userEdits(bot.token, { chatId: ALICE.id, messageId: message.message_id, text: "second" });
    const update = await nextUpdate();
    expect(await run(edit, contextOf(update))).toBe(false);

    const reask = contextOf(update, identity({ edits: { reask: true, windowSeconds: 60 } }));
    expect(await run(edit, reask)).toBe(true);
    expect(reask.taken.update_id).toBe(update.update_id);
    expect(reask.taken.message?.text).toBe("second");
  });

  it("spent press: a press on a chosen offer only stops the spinner, whoever pressed it", async () => {
    const sent = await grammy.api.sendMessage(ALICE.id, "offer", {
      reply_markup: { inline_keyboard: [[{ text: "✅ a", callback_data: CHOSEN_BUTTON_DATA }]] },
    });
    const { callbackQueryId } = standin.userPresses(bot.token, {
      from: MALLORY,
      chatId: ALICE.id,
      messageId: sent.message_id,
    });
    expect(await run(spentPress, contextOf(await nextUpdate()))).toBe(false);
    expect(standin.callbackAnswer(callbackQueryId)).toBeDefined();
  });

  it("binding: decides the edge record once; a group message not for the bot goes no further", async () => {
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "just chatting" });
    const chatter = contextOf(await nextUpdate());
    expect(await run(binding, chatter)).toBe(false);
    expect(() => chatter.seen).toThrow(EdgeOrderError);

    standin.userSends(bot.token, { from: MALLORY, text: "hi" });
    const dm = contextOf(await nextUpdate());
    expect(await run(binding, dm)).toBe(true);
    expect(dm.seen.edge).toMatchObject({
      room: `telegram:${bot.id}:${MALLORY.id}`,
      sender: { allowed: false },
    });
  });

  it("stranger: one refusal an hour and nothing handed on; an allowed sender passes", async () => {
    for (const text of ["one", "two"]) {
      standin.userSends(bot.token, { from: MALLORY, text });
      const ctx = contextOf(await nextUpdate());
      expect(await run(binding, ctx)).toBe(true);
      expect(await run(stranger, ctx)).toBe(false);
    }
    expect(standin.botMessages(bot.token, MALLORY.id)).toHaveLength(1);

    standin.userSends(bot.token, { from: ALICE, text: "hi" });
    const allowed = contextOf(await nextUpdate());
    await run(binding, allowed);
    expect(await run(stranger, allowed)).toBe(true);
  });

  it("page turn: ◀ ▶ edits the keyboard in place and is no turn", async () => {
    const sent = await grammy.api.sendMessage(ALICE.id, "many options", {
      reply_markup: {
        inline_keyboard: [[{ text: "▶", callback_data: pageData({ offerId: "o1", page: 1, total: 45 }) }]],
      },
    });
    standin.userPresses(bot.token, { from: ALICE, chatId: ALICE.id, messageId: sent.message_id });
    const ctx = contextOf(await nextUpdate());
    await run(binding, ctx);
    expect(await run(pageTurn, ctx)).toBe(false);
    expect(standin.callsTo("editMessageReplyMarkup", bot.id)).toHaveLength(1);
    expect(inbox.calls).toEqual([]);
  });

  it("enqueue: an admitted message becomes one queued event", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "what is new?" });
    const ctx = contextOf(await nextUpdate());
    await run(binding, ctx);
    await run(enqueue, ctx);
    expect(inbox.calls).toMatchObject([
      { kind: "message", text: "what is new?", sender: { id: `tg:${ALICE.id}` } },
    ]);
  });
});
