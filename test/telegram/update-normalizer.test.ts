import type { Update } from "grammy/types";
import { describe, expect, it } from "vitest";
import { InboundEventSchema, type InboundEvent, type InboundFile } from "../../src/core/event.js";
import { edgeOf, type BotIdentity } from "../../src/telegram/edge-record.js";
import { normalizeUpdate } from "../../src/telegram/update-normalizer.js";

const BOT_ID = 4242;
const ALICE = { id: 11, is_bot: false as const, first_name: "Alice" };
const MALLORY = { id: 66, is_bot: false as const, first_name: "Mallory" };
const GROUP = { id: -1001, type: "supergroup" as const, title: "Ops" };
const FORUM = { id: -1002, type: "supergroup" as const, title: "Forum", is_forum: true as const };
const OTHER_GROUP = { id: -1003, type: "supergroup" as const, title: "Elsewhere" };

const identity: BotIdentity = {
  id: BOT_ID,
  username: "FeedBot",
  config: {
    token: `${BOT_ID}:x`,
    namespace: "feed",
    users: [ALICE.id],
    topics: [],
    groups: [
      { chat: GROUP.id, users: [ALICE.id], topics: {} },
      { chat: FORUM.id, users: [ALICE.id], topics: {} },
    ],
  },
};

const noDocuments = async (): Promise<InboundFile> => {
  throw new Error("no document expected");
};

let nextId = 1;
function message(fields: Record<string, unknown>): Update {
  return {
    update_id: nextId++,
    message: {
      message_id: 5,
      date: 1,
      chat: { id: ALICE.id, type: "private", first_name: "Alice" },
      from: ALICE,
      ...fields,
    },
  } as unknown as Update;
}

function text(body: string, fields: Record<string, unknown> = {}): Update {
  const entities = [...body.matchAll(/(^|\s)(\/\w+(?:@\w+)?|@\w+)/g)].map((m) => ({
    type: m[2]!.startsWith("/") ? "bot_command" : "mention",
    offset: m.index + m[1]!.length,
    length: m[2]!.length,
  }));
  return message({ text: body, entities, ...fields });
}

/** The adapter's two steps: the edge record decided once, then the event built from it. */
async function normalize(update: Update, read = noDocuments): Promise<InboundEvent | null> {
  const seen = edgeOf(update, identity);
  return seen && normalizeUpdate(update, seen, identity, read, () => 1000);
}

describe("normalizeUpdate", () => {
  it("turns an allowed DM into a message event of the bot's namespace", async () => {
    const update = text("what's new?");
    const event = await normalize(update);
    expect(event).toMatchObject({
      kind: "message",
      text: "what's new?",
      eventId: `tg:${BOT_ID}:${update.update_id}`,
      room: `telegram:${BOT_ID}:${ALICE.id}`,
      namespace: "feed",
      platform: "telegram",
      sender: { id: "tg:11", name: "Alice", allowed: true },
      receivedAt: 1000,
      addressed: "direct",
      origin: {
        platform: "telegram",
        botId: BOT_ID,
        chatId: ALICE.id,
        messageId: 5,
        chatType: "private",
        userId: ALICE.id,
      },
    });
    expect(event).not.toHaveProperty("topic");
    // The edge record is what the event carries, so the worker reads it back as sent.
    expect(InboundEventSchema.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
  });

  it("marks a stranger's DM as not allowed but still queues it for the refusal", async () => {
    const event = await normalize(text("hi", { from: MALLORY, chat: { id: MALLORY.id, type: "private" } }));
    expect(event).toMatchObject({ kind: "message", sender: { id: "tg:66", allowed: false } });
  });

  it("keeps a message over the size limit whole: the engine refuses it", async () => {
    const long = "x".repeat(50_000);
    expect(await normalize(text(long))).toMatchObject({ kind: "message", text: long });
  });

  it("takes only commands, mentions and replies to the bot in groups", async () => {
    expect(await normalize(text("just chatting", { chat: GROUP }))).toBeNull();
    expect(await normalize(text("/help", { chat: GROUP }))).toMatchObject({ text: "/help" });
    expect(await normalize(text("@FeedBot what's new?", { chat: GROUP }))).toMatchObject({
      text: "what's new?",
    });
    expect(await normalize(text("hey @feedbot, top posts", { chat: GROUP }))).toMatchObject({
      text: "hey , top posts",
    });
    expect(await normalize(text("@someoneelse hi", { chat: GROUP }))).toBeNull();
    expect(await normalize(text("/help", { chat: GROUP }))).toMatchObject({ addressed: "command" });
    expect(await normalize(text("@FeedBot hi", { chat: GROUP }))).toMatchObject({ addressed: "mention" });
    const reply = {
      message_id: 3,
      date: 1,
      chat: GROUP,
      from: { id: BOT_ID, is_bot: true, first_name: "Feed" },
    };
    expect(await normalize(text("and older ones?", { chat: GROUP, reply_to_message: reply }))).toMatchObject({
      text: "and older ones?",
      room: `telegram:${BOT_ID}:${GROUP.id}`,
      addressed: "reply",
    });
  });

  it("strips the bot's name from /cmd@bot and ignores commands for other bots", async () => {
    expect(await normalize(text("/tools@FeedBot search words", { chat: GROUP }))).toMatchObject({
      text: "/tools search words",
    });
    expect(await normalize(text("/tools@OtherBot", { chat: GROUP }))).toBeNull();
    expect(await normalize(text("/reset@feedbot"))).toMatchObject({ text: "/reset" });
  });

  it("allows a group only when listed, with its own users: a DM approval does not open a group", async () => {
    expect(await normalize(text("/help", { chat: GROUP }))).toMatchObject({ sender: { allowed: true } });
    expect(await normalize(text("/help", { chat: GROUP, from: MALLORY }))).toMatchObject({
      sender: { allowed: false },
    });
    // A group no binding names is no room: the intake leaves it, and nothing is queued.
    expect(edgeOf(text("/help", { chat: OTHER_GROUP }), identity)).toMatchObject({
      edge: { sender: { allowed: false } },
      binding: { kind: "unbound" },
    });
    expect(await normalize(text("/help", { chat: OTHER_GROUP }))).toBeNull();
  });

  it("makes each forum topic its own room; the topic's creation message is no reply to the bot", async () => {
    const created = {
      message_id: 900,
      date: 1,
      chat: FORUM,
      from: { id: BOT_ID, is_bot: true, first_name: "Feed" },
      forum_topic_created: { name: "t", icon_color: 1 },
    };
    const inTopic = { chat: FORUM, message_thread_id: 900, is_topic_message: true };
    expect(await normalize(text("plain talk", { ...inTopic, reply_to_message: created }))).toBeNull();
    const event = await normalize(text("/status", inTopic));
    expect(event).toMatchObject({
      room: `telegram:${BOT_ID}:${FORUM.id}:900`,
      topic: "900",
      origin: { topicId: 900 },
    });
  });

  it("turns a button press into a choice carrying the callback data as token", async () => {
    const update = {
      update_id: nextId++,
      callback_query: {
        id: "cb1",
        from: ALICE,
        chat_instance: "x",
        data: "tok123",
        message: { message_id: 77, date: 1, chat: { id: ALICE.id, type: "private" }, text: "pick one" },
      },
    } as unknown as Update;
    expect(await normalize(update)).toMatchObject({
      kind: "choice",
      token: "tok123",
      room: `telegram:${BOT_ID}:${ALICE.id}`,
      sender: { allowed: true },
      addressed: "button",
      origin: { callbackQueryId: "cb1", messageId: 77, chatId: ALICE.id },
    });
  });

  it("reads documents through the reader, leaves photos and voice notes on Telegram, refuses other media with a reason", async () => {
    const doc = {
      file_id: "f",
      file_unique_id: "u",
      file_name: "draft.md",
      mime_type: "text/markdown",
      file_size: 5,
    };
    const read = async () => ({ name: "draft.md", mime: "text/markdown", size: 5, text: "hello" });
    expect(await normalize(message({ document: doc }), read)).toMatchObject({
      kind: "file",
      file: { name: "draft.md", text: "hello" },
    });
    // A photo stays on Telegram until a tool takes it: its largest size within the cap, and its caption.
    const sizes = [
      { file_id: "small", file_unique_id: "s", width: 90, height: 90, file_size: 9 },
      { file_id: "big", file_unique_id: "b", width: 2000, height: 2000, file_size: 5_000_000 },
    ];
    expect(await normalize(message({ photo: sizes, caption: "what is this?" }))).toMatchObject({
      kind: "file",
      file: {
        name: "photo.jpg",
        mime: "image/jpeg",
        kind: "photo",
        ref: "small",
        size: 9,
        caption: "what is this?",
      },
    });
    const voice = { file_id: "v", file_unique_id: "v", duration: 2, file_size: 2_000_000 };
    const loud = await normalize(message({ voice }));
    expect(loud?.kind === "file" && loud.file.rejected).toMatch(/is too large \(2000000 bytes\)/);
    const video = await normalize(
      message({
        video: { file_id: "m", file_unique_id: "m", width: 1, height: 1, duration: 1, file_size: 9 },
      }),
    );
    expect(video?.kind === "file" && video.file.rejected).toMatch(/Videos are not accepted/);
  });

  it("takes every message of a group bound with respond: all, saying so on the edge record", async () => {
    const all: BotIdentity = {
      ...identity,
      config: {
        ...identity.config,
        groups: [{ chat: GROUP.id, users: [ALICE.id], respond: "all", topics: {} }],
      },
    };
    const seen = edgeOf(text("just chatting", { chat: GROUP }), all);
    expect(seen?.edge).toMatchObject({ addressed: "all", sender: { allowed: true } });
    expect(edgeOf(text("/help", { chat: GROUP }), all)?.edge.addressed).toBe("command");
  });

  it("reads an event queued by the previous release (untyped origin, no addressed) as it was admitted", () => {
    const old = {
      kind: "message",
      text: "hi",
      eventId: "tg:1:2",
      room: `telegram:${BOT_ID}:${FORUM.id}:900`,
      namespace: "feed",
      platform: "telegram",
      sender: { id: "tg:11", allowed: true },
      receivedAt: 1,
      origin: { botId: BOT_ID, chatId: FORUM.id, topicId: 900, chatType: "supergroup", userId: 11 },
    };
    expect(InboundEventSchema.parse(old)).toMatchObject({
      addressed: "direct",
      topic: "900",
      origin: { platform: "telegram", topicId: 900 },
    });
    // An origin of another platform than the event's is not read as one.
    const crossed = { ...old, origin: { platform: "matrix", roomId: "!r:x", eventId: "$e", answerTo: "$e" } };
    expect(InboundEventSchema.safeParse({ ...crossed, addressed: "direct" }).success).toBe(false);
  });

  it("ignores service messages and messages from bots", async () => {
    expect(await normalize(message({ new_chat_members: [ALICE] }))).toBeNull();
    expect(await normalize(text("hi", { from: { id: 5, is_bot: true, first_name: "B" } }))).toBeNull();
  });
});
