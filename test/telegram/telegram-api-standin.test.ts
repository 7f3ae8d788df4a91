import { Api, GrammyError } from "grammy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";
import { waitFor } from "../support/wait.js";

/** The stand-in is only worth its tests if it refuses what Telegram refuses. */
let standin: TelegramApiStandin;
let bot: StandinBot;
let api: Api;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  bot = standin.addBot();
  api = new Api(bot.token, { apiRoot: standin.url });
});
afterAll(async () => standin.close());

async function refusal(call: Promise<unknown>): Promise<GrammyError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GrammyError);
  return err as GrammyError;
}

describe("TelegramApiStandin", () => {
  it("answers getMe for a known token and 401 for an unknown one", async () => {
    expect(await api.getMe()).toMatchObject({ id: bot.id, is_bot: true, username: bot.username });
    const err = await refusal(new Api("1:nope", { apiRoot: standin.url }).getMe());
    expect(err.error_code).toBe(401);
  });

  it("parses HTML like Telegram: entities decoded, malformed markup refused with its error shape", async () => {
    const sent = await api.sendMessage(
      1,
      `<b>a &lt;b&gt; &amp; &quot;q&quot; &#128512; &unknown;</b> <a href="https://x.org/?a=1&amp;b=2">x</a>`,
      {
        parse_mode: "HTML",
      },
    );
    expect(sent.text).toBe(`a <b> & "q" 😀 &unknown; x`);
    expect(sent.entities).toEqual([
      { type: "bold", offset: 0, length: 24 },
      { type: "text_link", offset: 25, length: 1, url: "https://x.org/?a=1&b=2" },
    ]);
    for (const bad of ["<b>open", "<x>no</x>", "a < b", "<b>x</i>", "</b>"]) {
      const err = await refusal(api.sendMessage(1, bad, { parse_mode: "HTML" }));
      expect(err.error_code).toBe(400);
      expect(err.description).toMatch(/^Bad Request: can't parse entities: /);
    }
  });

  it("measures length after entity parsing in UTF-16 units and refuses over 4096", async () => {
    await api.sendMessage(1, `<b>${"&amp;".repeat(4096)}</b>`, { parse_mode: "HTML" });
    const err = await refusal(api.sendMessage(1, "😀".repeat(2049)));
    expect(err.description).toBe("Bad Request: message is too long");
    expect((await refusal(api.sendMessage(1, "  "))).description).toBe("Bad Request: message text is empty");
  });

  it("refuses callback data over 64 bytes", async () => {
    const markup = (data: string) => ({
      reply_markup: { inline_keyboard: [[{ text: "b", callback_data: data }]] },
    });
    await api.sendMessage(1, "ok", markup("é".repeat(32)));
    const err = await refusal(api.sendMessage(1, "no", markup("é".repeat(33))));
    expect(err.description).toBe("Bad Request: BUTTON_DATA_INVALID");
  });

  it("holds getUpdates until an update arrives, confirms below the offset, and 409s an overlapping poll", async () => {
    const started = Date.now();
    const empty = await api.getUpdates({ timeout: 1 });
    expect(empty).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const waiting = api.getUpdates({ timeout: 5 });
    await waitFor(() => standin.isPolling(bot.token), undefined, "the long poll held open");
    standin.userSends(bot.token, { from: { id: 9, first_name: "U" }, text: "hi" });
    const [update] = await waiting;
    expect(update?.message?.text).toBe("hi");
    expect(await api.getUpdates({ offset: update!.update_id, timeout: 0 })).toHaveLength(1);
    expect(await api.getUpdates({ offset: update!.update_id + 1, timeout: 0 })).toEqual([]);

    const older = api.getUpdates({ timeout: 5 });
    await waitFor(() => standin.isPolling(bot.token), undefined, "the older poll held open");
    const newer = api.getUpdates({ timeout: 1 });
    expect((await refusal(older)).error_code).toBe(409);
    expect(await newer).toEqual([]);
  });

  it("injects 429 with retry_after and 5xx for the next calls", async () => {
    standin.inject("sendChatAction", { status: 429, retryAfter: 7 });
    standin.inject("sendChatAction", { status: 502 });
    const limited = await refusal(api.sendChatAction(1, "typing"));
    expect(limited.error_code).toBe(429);
    expect(limited.parameters.retry_after).toBe(7);
    expect((await refusal(api.sendChatAction(1, "typing"))).error_code).toBe(502);
    expect(await api.sendChatAction(1, "typing")).toBe(true);
  });

  it("answers a callback query once and edits reply markup like Telegram", async () => {
    const sent = await api.sendMessage(5, "pick", {
      reply_markup: { inline_keyboard: [[{ text: "a", callback_data: "a" }]] },
    });
    const { callbackQueryId } = standin.userPresses(bot.token, {
      from: { id: 5, first_name: "U" },
      chatId: 5,
      messageId: sent.message_id,
    });
    expect(await api.answerCallbackQuery(callbackQueryId, { text: "done" })).toBe(true);
    expect((await refusal(api.answerCallbackQuery(callbackQueryId))).description).toMatch(/query is too old/);
    const markup = { inline_keyboard: [[{ text: "✅ a", callback_data: "rg:chosen" }]] };
    await api.editMessageReplyMarkup(5, sent.message_id, { reply_markup: markup });
    const again = await refusal(api.editMessageReplyMarkup(5, sent.message_id, { reply_markup: markup }));
    expect(again.description).toMatch(/message is not modified/);
    expect((await refusal(api.editMessageReplyMarkup(5, 999, { reply_markup: markup }))).description).toMatch(
      /message to edit not found/,
    );
  });
});
