import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/core/config.js";
import { telegramRoom } from "../../src/core/room.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { TelegramApiStandin, type StandinBot, type StandinUser } from "../support/telegram-api-standin.js";
import { capturingLogger, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

const ALICE: StandinUser = { id: 9501, first_name: "Alice" };
const FORUM = { id: -1009510, type: "supergroup" as const, title: "Lab", is_forum: true as const };
const FAST = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };
const TOPICS = [
  { name: "Feed", namespace: "feed" },
  { name: "Runs", namespace: "runs" },
];

let standin: TelegramApiStandin;
let db: TestRedis;
let bot: StandinBot;
let runtime: Runtime | undefined;
let callLog: string;
let logged: ReturnType<typeof capturingLogger>;

beforeAll(async () => {
  standin = await TelegramApiStandin.start({ perChatRate: true });
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
  bot = standin.addBot({ username: "agents_bot", topics: true });
  logged = capturingLogger();
});
afterEach(async () => {
  await runtime?.stop();
  runtime = undefined;
  await db.cleanup();
});

function config(topics = TOPICS): Config {
  const demo = demoNamespaces({}, ["feed", "runs"]);
  callLog = demo.callLog;
  return telegramConfig({
    apiRoot: standin.url,
    namespaces: demo.config.namespaces,
    bots: [
      {
        token: bot.token,
        users: [ALICE.id],
        topics,
        groups: [{ chat: FORUM.id, users: [ALICE.id], topics: { "11": "runs", "22": "feed" } }],
      },
    ],
  });
}

async function start(cfg = config()): Promise<void> {
  runtime = await startRuntime({
    config: cfg,
    redisUrl: db.url,
    prefix: db.prefix,
    log: logged.log,
    platforms: [createTelegramPlatform({ polling: FAST })],
  });
}

const inChat = (thread?: number) => standin.botMessages(bot.token, ALICE.id, thread);
const general = () =>
  standin.botMessages(bot.token, ALICE.id).filter((m) => m.message_thread_id === undefined);
const threadOf = (name: string) =>
  [...standin.topics(bot.token, ALICE.id)].find(([, t]) => t.name === name && !t.deleted)?.[0];
const asked = (tool: string) => callsIn(callLog).filter((l) => l.startsWith(`${tool}\t`));

async function conversationOf(room: string): Promise<string> {
  const raw = await db.redis.get(db.schedulerKeys.session(room));
  return (JSON.parse(raw!) as { conversationId: string }).conversationId;
}

/** /start in General: the topics are made (or found) and General lists them. */
async function startTopics(): Promise<void> {
  const before = general().length;
  standin.userSends(bot.token, { from: ALICE, text: "/start" });
  await waitFor(() => general().length > before, 20_000, "the topic list in General");
}

describe("Telegram topics bound to namespaces: one bot, every agent", () => {
  it("makes one topic per agent on /start, each its own room and session, and General lists them", async () => {
    await start();
    await startTopics();
    const feed = threadOf("Feed")!;
    const runs = threadOf("Runs")!;
    expect(feed).toBeDefined();
    expect(runs).toBeDefined();
    expect(inChat(feed).map((m) => m.text)).toEqual([expect.stringContaining("feed agent")]);
    expect(inChat(runs).map((m) => m.text)).toEqual([expect.stringContaining("runs agent")]);
    expect(general().at(-1)!.text).toContain("• Feed → feed\n• Runs → runs");

    standin.userSends(bot.token, { from: ALICE, threadId: feed, text: "what should I read today?" });
    standin.userSends(bot.token, { from: ALICE, threadId: runs, text: "which arm of my sweep won?" });
    await waitFor(() => inChat(feed).length === 2 && inChat(runs).length === 2, 30_000, "both answers");
    expect(inChat(feed)[1]!.text).toContain("digest");
    expect(inChat(runs)[1]!.text).toMatch(/arm/i);
    expect(asked("feed.ask").map((l) => JSON.parse(l.split("\t")[1]!).question)).toEqual([
      "what should I read today?",
    ]);
    expect(asked("runs.ask")).toHaveLength(1);
    const feedRoom = telegramRoom(bot.id, ALICE.id, feed);
    const runsRoom = telegramRoom(bot.id, ALICE.id, runs);
    expect(await conversationOf(feedRoom)).not.toBe(await conversationOf(runsRoom));

    // A message in General reaches no agent: it gets the list again.
    const before = general().length;
    standin.userSends(bot.token, { from: ALICE, text: "hello?" });
    await waitFor(() => general().length === before + 1, 20_000, "the list");
    expect(general().at(-1)!.text).toContain("Each topic here talks to one agent");
    expect(asked("feed.ask")).toHaveLength(1);
    expect(await db.redis.exists(db.schedulerKeys.session(telegramRoom(bot.id, ALICE.id)))).toBe(0);

    // A topic she made herself is bound to no agent: the list answers in that topic.
    standin.userSends(bot.token, { from: ALICE, threadId: 77, text: "anyone here?" });
    await waitFor(() => inChat(77).length === 1, 20_000, "the list in her own topic");
    expect(inChat(77)[0]!.text).toContain("• Feed → feed\n• Runs → runs");
    expect(general()).toHaveLength(before + 1);
    expect(asked("feed.ask")).toHaveLength(1);
  });

  it("finds its topics again on /start, makes a deleted one anew, and tells a topic whose agent was removed", async () => {
    await start();
    await startTopics();
    const feed = threadOf("Feed")!;
    const runs = threadOf("Runs")!;
    standin.userDeletesTopic(bot.token, ALICE.id, feed);
    await startTopics();
    const newFeed = threadOf("Feed")!;
    expect(newFeed).not.toBe(feed);
    expect(threadOf("Runs")).toBe(runs);
    expect([...standin.topics(bot.token, ALICE.id).values()].filter((t) => !t.deleted)).toHaveLength(2);
    expect(logged.lines().filter((l) => l.msg === "telegram: a deleted topic was made again")).toHaveLength(
      1,
    );
    // Runs was found, not made again: its intro came once more, in the same topic.
    expect(inChat(runs)).toHaveLength(2);

    await runtime!.stop();
    await start(config([TOPICS[0]!]));
    standin.userSends(bot.token, { from: ALICE, threadId: runs, text: "which arm of my sweep won?" });
    await waitFor(() => inChat(runs).length === 3, 20_000, "the retired topic's line");
    expect(inChat(runs)[2]!.text).toContain("was for the runs agent, which this bot no longer serves");
    expect(asked("runs.ask")).toEqual([]);
  });

  it("binds a forum supergroup's topics by id, and lists them in General and in a topic no binding names", async () => {
    await start();
    const mention = (text: string) => `@${bot.username} ${text}`;
    const inTopic = (thread?: number) => standin.botMessages(bot.token, FORUM.id, thread);
    standin.userSends(bot.token, {
      from: ALICE,
      chat: FORUM,
      threadId: 11,
      text: mention("which arm of my sweep won?"),
    });
    standin.userSends(bot.token, {
      from: ALICE,
      chat: FORUM,
      threadId: 22,
      text: mention("what should I read today?"),
    });
    await waitFor(() => inTopic(11).length === 1 && inTopic(22).length === 1, 30_000, "both topic answers");
    expect(inTopic(11)[0]!.text).toMatch(/arm/i);
    expect(inTopic(22)[0]!.text).toContain("digest");
    expect(asked("runs.ask")).toHaveLength(1);
    expect(asked("feed.ask")).toHaveLength(1);

    standin.userSends(bot.token, { from: ALICE, chat: FORUM, text: mention("which agents are here?") });
    await waitFor(
      () => inTopic().some((m) => m.message_thread_id === undefined),
      20_000,
      "the list in General",
    );
    const list = inTopic().find((m) => m.message_thread_id === undefined)!.text!;
    expect(list).toContain("• #11 → runs (https://t.me/c/9510/11)");
    expect(list).toContain("• #22 → feed (https://t.me/c/9510/22)");
    expect(asked("feed.ask")).toHaveLength(1);

    // A topic no binding names gets the same list, in that topic rather than in General.
    standin.userSends(bot.token, { from: ALICE, chat: FORUM, threadId: 33, text: mention("hello?") });
    await waitFor(() => inTopic(33).length === 1, 20_000, "the list in topic 33");
    expect(inTopic(33)[0]!.text).toBe(list);
    expect(inTopic().filter((m) => m.message_thread_id === undefined)).toHaveLength(1);
    expect(asked("runs.ask")).toHaveLength(1);
  });

  it("tells a private chat that topic mode is off when the bot lists topics without it, and warns at start", async () => {
    const off = standin.addBot({ username: "no_topics_bot" });
    const cfg = (namespace?: string) =>
      telegramConfig({
        apiRoot: standin.url,
        namespaces: demoNamespaces({}, ["feed"]).config.namespaces,
        bots: [
          {
            token: off.token,
            users: [ALICE.id],
            topics: TOPICS.slice(0, 1),
            ...(namespace ? { namespace } : {}),
          },
        ],
      });
    await start(cfg());
    expect(logged.lines().filter((l) => String(l.msg).includes("its topic mode is off"))).toHaveLength(1);
    standin.userSends(off.token, { from: ALICE, text: "/start" });
    await waitFor(() => standin.botMessages(off.token, ALICE.id).length === 1, 20_000, "the line");
    expect(standin.botMessages(off.token, ALICE.id)[0]!.text).toContain("topic mode is off for it");
    expect(standin.callsTo("createForumTopic", off.id)).toEqual([]);

    // With a namespace of its own, the bot's private chat is that agent's, as without topics.
    await runtime!.stop();
    await start(cfg("feed"));
    standin.userSends(off.token, { from: ALICE, text: "what should I read today?" });
    await waitFor(() => standin.botMessages(off.token, ALICE.id).length === 2, 20_000, "the answer");
    expect(standin.botMessages(off.token, ALICE.id)[1]!.text).toContain("digest");
  });
});
