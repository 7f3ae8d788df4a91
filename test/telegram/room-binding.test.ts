import { describe, expect, it } from "vitest";
import { checkConfigText, ConfigSchema } from "../../src/core/config.js";
import type { PrivateTopics } from "../../src/telegram/private-topics.js";
import { namespacesOf } from "../../src/access/telegram.js";
import { bindingOf } from "../../src/telegram/room-binding.js";

const ALICE = 501;
const FORUM = -100777;

function bot(extra: Record<string, unknown>) {
  const config = ConfigSchema.parse({
    namespaces: { feed: { command: ["x"] }, runs: { command: ["x"] }, stt: { command: ["x"] } },
    telegram: { bots: [{ token: "1:a", users: [ALICE], ...extra }] },
  });
  return config.telegram!.bots[0]!;
}

/** Topics the bot made: Feed in thread 7, and Old (made for a namespace since removed) in thread 9. */
const made = {
  byThread: (_chat: number, thread: number) =>
    thread === 7
      ? { name: "Feed", threadId: 7, namespace: "feed" }
      : thread === 9
        ? { name: "Old", threadId: 9, namespace: "kg" }
        : undefined,
  byName: (_chat: number, name: string) =>
    name === "Feed" ? { name, threadId: 7, namespace: "feed" } : undefined,
} as unknown as PrivateTopics;

const dm = { id: ALICE, type: "private" };

describe("Telegram room bindings", () => {
  const topics = [
    { name: "Feed", namespace: "feed", voice: { tool: "stt.transcribe" } },
    { name: "Runs", namespace: "runs" },
  ];

  it("binds each private topic the bot made to its entry's namespace, and General to the list", () => {
    const b = bot({ topics });
    const ctx = { topicsEnabled: true, topics: made };
    expect(bindingOf(b, { chat: dm, topicId: 7 }, ctx)).toEqual({
      kind: "agent",
      namespace: "feed",
      voice: { tool: "stt.transcribe" },
    });
    expect(bindingOf(b, { chat: dm, topicId: undefined }, ctx)).toEqual({
      kind: "lobby",
      topics: [
        { name: "Feed", namespace: "feed", threadId: 7 },
        { name: "Runs", namespace: "runs" },
      ],
    });
    expect(bindingOf(b, { chat: dm, topicId: 9 }, ctx)).toMatchObject({
      kind: "retired",
      topic: { name: "Old", namespace: "kg" },
    });
    // A topic the person made (not one of the bot's) has no agent without a default.
    expect(bindingOf(b, { chat: dm, topicId: 12 }, ctx)).toMatchObject({ kind: "lobby" });
  });

  it("keeps the bot's namespace as the default for chats and topics without a binding", () => {
    const b = bot({ namespace: "feed", topics });
    expect(bindingOf(b, { chat: dm, topicId: 12 }, { topicsEnabled: true, topics: made })).toEqual({
      kind: "agent",
      namespace: "feed",
    });
    // Without BotFather's topic mode a private chat has no topics: the default answers.
    expect(bindingOf(b, { chat: dm, topicId: undefined }, { topicsEnabled: false })).toEqual({
      kind: "agent",
      namespace: "feed",
    });
    expect(bindingOf(bot({ namespace: "runs" }), { chat: dm, topicId: 4 }, { topicsEnabled: true })).toEqual({
      kind: "agent",
      namespace: "runs",
    });
  });

  it("binds forum topics by id, the group's or bot's namespace elsewhere, and lists them otherwise", () => {
    const groups = [{ chat: FORUM, users: [ALICE], topics: { "11": "runs", "22": "feed" } }];
    const forum = { id: FORUM, type: "supergroup" };
    const b = bot({ topics, groups });
    expect(bindingOf(b, { chat: forum, topicId: 11 }, { topicsEnabled: false })).toEqual({
      kind: "agent",
      namespace: "runs",
    });
    expect(bindingOf(b, { chat: forum, topicId: undefined }, { topicsEnabled: false })).toMatchObject({
      kind: "lobby",
      topics: [{ name: "#11", namespace: "runs", threadId: 11 }, { name: "#22" }],
    });
    const withDefault = bot({ namespace: "feed", groups: [{ ...groups[0], namespace: "runs" }] });
    expect(bindingOf(withDefault, { chat: forum, topicId: 5 }, { topicsEnabled: false })).toEqual({
      kind: "agent",
      namespace: "runs",
    });
    expect(
      bindingOf(b, { chat: { id: -5, type: "group" }, topicId: undefined }, { topicsEnabled: false }),
    ).toEqual({
      kind: "unbound",
    });
    expect([...namespacesOf(b, forum)].sort()).toEqual(["feed", "runs"]);
    expect([...namespacesOf(bot({ namespace: "feed", topics: [topics[1]] }), dm)].sort()).toEqual([
      "feed",
      "runs",
    ]);
  });

  it("refuses a bot with neither namespace nor topics, unknown or twice-listed topics, and a voice tool nobody serves", () => {
    const ns = "namespaces:\n  feed: { command: [x] }\n  stt: { command: [x] }\n";
    const errors = (bots: string) =>
      checkConfigText(`${ns}telegram:\n  bots:\n${bots}`, {}).errors.map((e) => `${e.path}: ${e.message}`);
    expect(errors(`    - token: "1:a"\n      users: [1]\n`)).toEqual([
      "telegram.bots[0].namespace: required unless the bot lists `topics` (one namespace per private-chat topic)",
    ]);
    expect(
      errors(
        `    - token: "1:a"\n      topics:\n        - { name: Feed, namespace: feed }\n        - { name: feed, namespace: fed }\n      voice: { tool: speech.transcribe }\n      groups:\n        - { chat: -1, topics: { "11": nope } }\n`,
      ),
    ).toEqual([
      'telegram.bots[0].topics[1].name: topic "feed" is listed twice (also at topics[0])',
      'telegram.bots[0].topics[1].namespace: unknown namespace "fed" (known: feed, stt)',
      'telegram.bots[0].voice.tool: no configured namespace has the prefix of "speech.transcribe"; name its namespace with voice.namespace',
      'telegram.bots[0].groups[0].topics.11: unknown namespace "nope" (known: feed, stt)',
    ]);
    expect(
      errors(
        `    - token: "1:a"\n      topics: [{ name: Feed, namespace: feed, voice: { tool: stt.transcribe } }]\n`,
      ),
    ).toEqual([]);
  });
});
