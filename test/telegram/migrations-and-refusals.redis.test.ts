import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/core/config.js";
import type { Logger } from "../../src/core/log.js";
import { telegramRoom } from "../../src/core/room.js";
import { edgeTexts } from "../../src/edge/edge-texts.js";
import { DeadLetters } from "../../src/scheduler/dead-letters.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { DEMO_SERVER } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot, type StandinUser } from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 9301, first_name: "Alice" };
const MALLORY: StandinUser = { id: 9366, first_name: "Mallory" };
const SMALL = { id: -9310, type: "group" as const, title: "Small" };
const FORUM = { id: -1009320, type: "supergroup" as const, title: "Forum", is_forum: true as const };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let runtime: Runtime | undefined;
let logged: ReturnType<typeof capturingLogger>;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot({ username: "moves_feed_bot" });
  logged = capturingLogger();
});
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  await db.cleanup();
});

function config(groupIds: number[], slowMs = 0): Config {
  return telegramConfig({
    apiRoot: standin.url,
    namespaces: {
      feed: {
        command: [process.execPath, DEMO_SERVER],
        env: { ATTEST_TOOLS: "feed", DEMO_SLOW_MS: String(slowMs) },
      },
    },
    bots: [
      { token: bot.token, users: [ALICE.id], groups: groupIds.map((chat) => ({ chat, users: [ALICE.id] })) },
    ],
  });
}

async function start(cfg: Config, log: Logger = logged.log): Promise<void> {
  runtime = await startRuntime({
    config: cfg,
    redisUrl: db.url,
    prefix: db.prefix,
    log,
    platforms: [createTelegramPlatform({ polling: FAST })],
  });
}

const mention = (text: string) => `@${bot.username} ${text}`;
const texts = (chatId: number, thread?: number) =>
  standin.botMessages(bot.token, chatId, thread).map((m) => m.text);
const lines = (msg: string) => logged.lines().filter((l) => String(l.msg).includes(msg));

async function conversationOf(room: string): Promise<string | undefined> {
  const raw = await db.redis.get(db.schedulerKeys.session(room));
  return raw === null ? undefined : (JSON.parse(raw) as { conversationId: string }).conversationId;
}

describe("Telegram migrations, refusals and notices", () => {
  it("follows a group migrated while its reply is in flight, and keeps it as the same room under either id", async () => {
    await start(config([SMALL.id], 1500));
    standin.userSends(bot.token, { from: ALICE, chat: SMALL, text: mention("what should I read today?") });
    await waitFor(() => standin.callsTo("sendChatAction", bot.id).length > 0, 20_000, "the turn to run");
    const supergroup = standin.migrateGroup(bot.token, { chatId: SMALL.id, by: ALICE });
    // The reply got Telegram's 400 with migrate_to_chat_id and went to the new id instead of the dead letters.
    await waitFor(() => texts(supergroup.id).length === 1, 20_000, "the reply in the supergroup");
    expect(await new DeadLetters(db.redis, db.scheduler).list()).toEqual([]);
    expect(lines("the reply goes to its new id")).toHaveLength(1);
    await waitFor(() => lines("continues as the same room").length === 1, 10_000, "the migration log line");
    expect(lines("continues as the same room")[0]).toMatchObject({ from: SMALL.id, to: supergroup.id });

    const room = telegramRoom(bot.id, SMALL.id);
    const conversation = await conversationOf(room);
    expect(conversation).toBeDefined();
    standin.userSends(bot.token, { from: ALICE, chat: supergroup, text: mention("/status") });
    await waitFor(() => texts(supergroup.id).length === 2, 20_000, "the answer in the supergroup");
    expect(standin.callsTo("leaveChat", bot.id)).toEqual([]);
    expect(texts(supergroup.id)[1]).toContain(conversation!);
    expect(await db.redis.exists(db.schedulerKeys.session(telegramRoom(bot.id, supergroup.id)))).toBe(0);

    // The operator puts the new id in the configuration: still the same room and conversation.
    await runtime!.stop();
    await start(config([supergroup.id]));
    standin.userSends(bot.token, { from: ALICE, chat: supergroup, text: mention("/status") });
    await waitFor(() => texts(supergroup.id).length === 3, 20_000, "the answer after the restart");
    expect(texts(supergroup.id)[2]).toContain(conversation!);
    expect(standin.callsTo("leaveChat", bot.id)).toEqual([]);
  });

  it("logs a reply refused for good (kicked) as a refusal, not as a missed deadline", async () => {
    const group = { id: -1009330, type: "supergroup" as const, title: "Ops" };
    await start(config([group.id], 1500));
    standin.userSends(bot.token, { from: ALICE, chat: group, text: mention("what should I read today?") });
    await waitFor(() => standin.callsTo("sendChatAction", bot.id).length > 0, 20_000, "the turn to run");
    standin.kickBot(bot.token, group.id);
    await waitFor(() => lines("refused by the platform").length === 1, 20_000, "the refusal log line");
    const [line] = lines("refused by the platform");
    expect(line!.level).toBe(40);
    expect(String(line!.refusal)).toContain("Forbidden: bot was kicked from the supergroup chat");
    expect(lines("by its deadline")).toEqual([]);
    const letters = await new DeadLetters(db.redis, db.scheduler).list();
    expect(letters.map((l) => l.reason)).toEqual([expect.stringContaining("bot was kicked")]);
  });

  it("sends the edge's notices into the forum topic they answer", async () => {
    await start(config([FORUM.id]));
    standin.userSends(bot.token, { from: MALLORY, chat: FORUM, threadId: 22, text: mention("let me in") });
    await waitFor(() => texts(FORUM.id).length === 1, 20_000, "the refusal");
    expect(standin.botMessages(bot.token, FORUM.id, 22).map((m) => m.text)).toEqual([edgeTexts.refusal]);
    const call = standin.callsTo("sendMessage", bot.id).at(-1)!;
    expect(Number(call.params.message_thread_id)).toBe(22);
  });
});
