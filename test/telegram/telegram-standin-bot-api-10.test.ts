import { Api, GrammyError } from "grammy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";

// Bot API 10 on the stand-in, as documented: the Stop a private chat shows on a draft
// sent with can_stop (a stopped_message_generation update), and ephemeral messages
// (only in groups, only to a member, seen by that member alone).

let standin: TelegramApiStandin;
let bot: StandinBot;
let api: Api;
const ALICE = { id: 7301, first_name: "Alice" };
const BOB = { id: 7302, first_name: "Bob" };
const GROUP = { id: -1007300, type: "supergroup" as const, title: "Team" };

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot({ topics: true });
  api = new Api(bot.token, { apiRoot: standin.url });
});
afterAll(async () => standin.close());

async function refusal(call: Promise<unknown>): Promise<string> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GrammyError);
  return (err as GrammyError).description;
}

describe("Bot API 10 on the stand-in", () => {
  it("a Stop on a draft sent with can_stop reaches the bot as stopped_message_generation, and only then", async () => {
    standin.userSends(bot.token, { from: ALICE, text: "hi" });
    await api.sendMessageDraft(ALICE.id, 11, "working", {});
    expect(() => standin.userStops(bot.token, ALICE.id, 11)).toThrow(/no Stop button/);
    await api.sendMessageDraft(ALICE.id, 12, "working", { can_stop: true });
    standin.userStops(bot.token, ALICE.id, 12);
    expect(() => standin.userStops(bot.token, ALICE.id, 12)).toThrow(/is gone/);
    const updates = await api.getUpdates({
      allowed_updates: ["message", "stopped_message_generation"],
      timeout: 0,
    });
    expect(updates.at(-1)?.stopped_message_generation).toEqual({
      chat: { id: ALICE.id, type: "private", first_name: "Alice" },
      draft_id: 12,
    });
    // Drafts are for private chats only.
    expect(await refusal(api.sendMessageDraft(GROUP.id, 13, "x", { can_stop: true }))).toMatch(
      /TEXTDRAFT_PEER_INVALID/,
    );
  });

  it("an ephemeral message goes to one member of a group, who alone sees it and may press it", async () => {
    standin.userSends(bot.token, { from: ALICE, chat: GROUP, text: "hello" });
    const alone = { ephemeral_message_parameters: { receiver_user_id: ALICE.id } };
    expect(await refusal(api.sendMessage(ALICE.id, "x", alone))).toMatch(/groups and supergroups only/);
    expect(
      await refusal(
        api.sendMessage(GROUP.id, "x", { ephemeral_message_parameters: { receiver_user_id: BOB.id } }),
      ),
    ).toMatch(/USER_NOT_PARTICIPANT/);
    const keyboard = { inline_keyboard: [[{ text: "Yes", callback_data: "y" }]] };
    const sent = await api.sendMessage(GROUP.id, "for Alice", { ...alone, reply_markup: keyboard });
    expect(sent).toMatchObject({ message_id: 0, ephemeral_message_id: 1, receiver_user: { id: ALICE.id } });
    expect(standin.visibleTo(bot.token, GROUP.id, ALICE.id).map((m) => m.text)).toContain("for Alice");
    standin.addMember(bot.token, GROUP, BOB);
    expect(standin.visibleTo(bot.token, GROUP.id, BOB.id).map((m) => m.text)).not.toContain("for Alice");
    expect(standin.botMessages(bot.token, GROUP.id).map((m) => m.text)).not.toContain("for Alice");
    expect(() =>
      standin.userPresses(bot.token, { from: BOB, chatId: GROUP.id, messageId: 0, ephemeralId: 1 }),
    ).toThrow(/cannot see/);
    const { callbackQueryId } = standin.userPresses(bot.token, {
      from: ALICE,
      chatId: GROUP.id,
      messageId: 0,
      ephemeralId: 1,
    });
    // A reply to a press is the presser's alone.
    expect(
      await refusal(
        api.sendMessage(GROUP.id, "x", {
          ephemeral_message_parameters: { receiver_user_id: BOB.id, callback_query_id: callbackQueryId },
        }),
      ),
    ).toMatch(/query is too old/);
    await api.sendMessage(GROUP.id, "answered", {
      ephemeral_message_parameters: { receiver_user_id: ALICE.id, callback_query_id: callbackQueryId },
    });
    await api.editEphemeralMessageReplyMarkup(GROUP.id, ALICE.id, 1, {
      reply_markup: { inline_keyboard: [[{ text: "✅ Yes", callback_data: "done" }]] },
    });
    expect(
      standin.visibleTo(bot.token, GROUP.id, ALICE.id).find((m) => m.text === "for Alice")?.reply_markup,
    ).toEqual({ inline_keyboard: [[{ text: "✅ Yes", callback_data: "done" }]] });
    expect(await refusal(api.editEphemeralMessageReplyMarkup(GROUP.id, BOB.id, 1, {}))).toMatch(/not found/);
  });
});
