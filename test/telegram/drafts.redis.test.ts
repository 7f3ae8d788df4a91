import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { draftIdOf } from "../../src/telegram/telegram-drafts.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin, type StandinBot, type StandinUser } from "../support/telegram-api-standin.js";
import { telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 9401, first_name: "Alice" };
const GROUP = { id: -1009402, type: "supergroup" as const, title: "Ops" };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };
const LONG = "/call trigger-long-running-operation duration=4 steps=8";
const SHORT = "/call trigger-long-running-operation duration=2 steps=4";
const DONE = "Long running operation completed";

describe("Telegram progress as drafts in private chats", () => {
  let standin: TelegramApiStandin;
  let db: TestRedis;
  let threaded: StandinBot;
  let plain: StandinBot;
  let runtime: Runtime;
  beforeAll(async () => {
    standin = await TelegramApiStandin.start({ perChatRate: true });
    db = await testRedis();
    threaded = standin.addBot({ username: "drafts_bot", topics: true });
    plain = standin.addBot({ username: "plain_drafts_bot" });
    const bot = (token: string) => ({
      token,
      namespace: "everything",
      users: [ALICE.id],
      groups: [{ chat: GROUP.id, users: [ALICE.id] }],
    });
    runtime = await startRuntime({
      config: telegramConfig({
        apiRoot: standin.url,
        namespaces: { everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false } },
        bots: [bot(threaded.token), bot(plain.token)],
      }),
      redisUrl: db.url,
      prefix: db.prefix,
      log: silentLogger(),
      platforms: [createTelegramPlatform({ polling: FAST, sender: { drafts: { keepAliveMs: 1200 } } })],
    });
  });
  afterAll(async () => {
    await runtime.stop();
    await db.cleanup();
    await standin.close();
  });

  async function longCall(bot: StandinBot, chat?: typeof GROUP, call = LONG): Promise<void> {
    const chatId = chat?.id ?? ALICE.id;
    const mention = chat ? `@${bot.username} ` : "";
    const count = () => standin.botMessages(bot.token, chatId).length;
    standin.userSends(bot.token, { from: ALICE, ...(chat ? { chat } : {}), text: `${mention}/tools` });
    await waitFor(() => count() >= 1, 30_000, "the tools list");
    const { updateId } = standin.userSends(bot.token, {
      from: ALICE,
      ...(chat ? { chat } : {}),
      text: `${mention}${call}`,
    });
    await waitFor(
      () => standin.botMessages(bot.token, chatId).some((m) => m.text?.includes(DONE)),
      30_000,
      "the answer",
    );
    expect(updateId).toBeGreaterThan(0);
  }

  it("streams one draft per turn during a slow call, paced, then sends one final message", async () => {
    const before = standin.botMessages(threaded.token, ALICE.id).length;
    await longCall(threaded);
    const after = standin.botMessages(threaded.token, ALICE.id).slice(before + 1);
    // The answer is the only message: no status message was sent or edited.
    expect(after.map((m) => m.text)).toEqual([expect.stringContaining(DONE)]);
    expect(after[0]!.sent!.edits).toBe(0);
    const drafts = standin.drafts(threaded.token, ALICE.id);
    expect(drafts.length).toBeGreaterThanOrEqual(3);
    expect(new Set(drafts.map((d) => d.draftId)).size).toBe(1);
    const turn = standin.callsTo("sendMessage", threaded.id).at(-1)!;
    expect(turn.params.chat_id).toBe(ALICE.id);
    expect(drafts[0]!.draftId).not.toBe(0);
    expect(drafts.every((d) => d.text.startsWith("⏳"))).toBe(true);
    const gaps = drafts.slice(1).map((d, i) => d.at - drafts[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(950);
    // The final message ended the draft; nothing was streamed after it.
    expect(drafts.every((d) => d.endedAt !== undefined && d.at <= d.endedAt)).toBe(true);
    expect(drafts.every((d) => d.at <= after[0]!.date * 1000 + 1000)).toBe(true);
  });

  it("renews a draft whose call reports no new progress before the preview lapses", async () => {
    const seen = standin.drafts(threaded.token, ALICE.id).length;
    standin.userSends(threaded.token, {
      from: ALICE,
      text: "/call trigger-long-running-operation duration=5 steps=2",
    });
    await waitFor(
      () => standin.drafts(threaded.token, ALICE.id).length >= seen + 2,
      20_000,
      "a renewed draft",
    );
    const [first, second] = standin.drafts(threaded.token, ALICE.id).slice(seen);
    expect(second!.draftId).toBe(first!.draftId);
    expect(second!.text).toBe(first!.text);
    await waitFor(
      () => standin.botMessages(threaded.token, ALICE.id).at(-1)?.text?.includes(DONE),
      20_000,
      "the answer",
    );
  });

  it("keeps the edited status message in groups, and for a bot Telegram refuses drafts for", async () => {
    await longCall(threaded, GROUP, SHORT);
    expect(standin.drafts(threaded.token, GROUP.id)).toEqual([]);
    const status = standin.botMessages(threaded.token, GROUP.id).find((m) => /^[⏳✓]/u.test(m.text ?? ""));
    expect(status?.sent?.edits).toBeGreaterThanOrEqual(1);

    await longCall(plain, undefined, SHORT);
    expect(standin.callsTo("sendMessageDraft", plain.id).filter((c) => c.ok)).toEqual([]);
    const plainStatus = standin.botMessages(plain.token, ALICE.id).find((m) => /^[⏳✓]/u.test(m.text ?? ""));
    expect(plainStatus?.sent?.edits).toBeGreaterThanOrEqual(1);
    // Refused once, then remembered: no draft is tried again for that bot.
    expect(standin.callsTo("sendMessageDraft", plain.id)).toHaveLength(1);
  });

  it("derives a stable non-zero draft id from the turn", () => {
    expect(draftIdOf("tg:1:2")).toBe(draftIdOf("tg:1:2"));
    expect(draftIdOf("tg:1:2")).not.toBe(draftIdOf("tg:1:3"));
    expect(draftIdOf("x")).toBeGreaterThan(0);
  });
});
