import { Api, GrammyError } from "grammy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TelegramApiStandin, type StandinBot } from "../support/telegram-api-standin.js";

/** Topics, drafts, files, kicks and migrations: the stand-in refuses what Telegram refuses. */
let standin: TelegramApiStandin;
let plain: StandinBot;
let threaded: StandinBot;
let api: Api;
let topicsApi: Api;
const ALICE = { id: 7101, first_name: "Alice" };

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
  plain = standin.addBot();
  threaded = standin.addBot({ topics: true });
  api = new Api(plain.token, { apiRoot: standin.url });
  topicsApi = new Api(threaded.token, { apiRoot: standin.url });
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

describe("Telegram stand-in: topics, drafts, files, refusals and migrations", () => {
  it("creates topics in a private chat only for a bot with topic mode, and sends into live topics only", async () => {
    expect((await topicsApi.getMe()).has_topics_enabled).toBe(true);
    expect((await api.getMe()).has_topics_enabled).toBe(false);
    expect((await refusal(api.createForumTopic(ALICE.id, "Feed"))).description).toBe(
      "Bad Request: the chat is not a forum",
    );
    const topic = await topicsApi.createForumTopic(ALICE.id, "Feed");
    expect(topic).toMatchObject({ name: "Feed", icon_color: 0x6fb9f0 });
    const sent = await topicsApi.sendMessage(ALICE.id, "hi", { message_thread_id: topic.message_thread_id });
    expect(sent).toMatchObject({ message_thread_id: topic.message_thread_id, is_topic_message: true });
    expect(
      (await refusal(topicsApi.sendMessage(ALICE.id, "hi", { message_thread_id: 4242 }))).description,
    ).toBe("Bad Request: message thread not found");
    standin.userDeletesTopic(threaded.token, ALICE.id, topic.message_thread_id);
    expect(
      (await refusal(topicsApi.sendMessage(ALICE.id, "hi", { message_thread_id: topic.message_thread_id })))
        .description,
    ).toBe("Bad Request: message thread not found");
    // Like Telegram, typing into a deleted topic is still answered True.
    expect(
      await topicsApi.sendChatAction(ALICE.id, "typing", { message_thread_id: topic.message_thread_id }),
    ).toBe(true);
    expect((await refusal(topicsApi.createForumTopic(ALICE.id, ""))).description).toMatch(
      /TOPIC_TITLE_EMPTY/,
    );
    expect((await refusal(topicsApi.createForumTopic(ALICE.id, "x".repeat(129)))).description).toMatch(
      /TOPIC_TITLE_TOO_LONG/,
    );
  });

  it("creates forum topics only in a forum supergroup", async () => {
    const forum = { id: -1007101, type: "supergroup" as const, title: "Forum", is_forum: true as const };
    const flat = { id: -1007102, type: "supergroup" as const, title: "Flat" };
    standin.userSends(plain.token, { from: ALICE, chat: forum, text: "hello" });
    standin.userSends(plain.token, { from: ALICE, chat: flat, text: "hello" });
    expect((await api.createForumTopic(forum.id, "Runs")).name).toBe("Runs");
    expect((await refusal(api.createForumTopic(flat.id, "Runs"))).description).toMatch(/not a forum/);
  });

  it("streams drafts in private chats of a bot with topic mode; a sent message ends the draft", async () => {
    const bob = 7102;
    await topicsApi.sendMessageDraft(bob, 17, "Working…");
    await topicsApi.sendMessageDraft(bob, 17, "Working… 50%");
    expect((await refusal(topicsApi.sendMessageDraft(bob, 0, "x"))).description).toMatch(/non-zero/);
    expect((await refusal(topicsApi.sendMessageDraft(-1007101, 5, "x"))).description).toMatch(
      /TEXTDRAFT_PEER_INVALID/,
    );
    expect((await refusal(api.sendMessageDraft(bob, 5, "x"))).error_code).toBe(400);
    expect((await refusal(topicsApi.sendMessageDraft(bob, 5, "x".repeat(4097)))).description).toMatch(
      /too long/,
    );
    await topicsApi.sendMessage(bob, "done");
    const drafts = standin.drafts(threaded.token, bob);
    expect(drafts.map((d) => [d.draftId, d.text])).toEqual([
      [17, "Working…"],
      [17, "Working… 50%"],
    ]);
    expect(drafts.every((d) => d.endedAt !== undefined)).toBe(true);
  });

  it("serves photos in several sizes and voice notes through getFile, within the 20 MB download limit", async () => {
    const photo = standin.addPhoto({ content: Buffer.alloc(5000, 7) });
    expect(photo).toHaveLength(2);
    const full = photo.at(-1)!;
    const file = await api.getFile(String(full.file_id));
    expect(file.file_path).toMatch(/^photos\/.+\.jpg$/);
    const res = await fetch(`${standin.url}/file/bot${plain.token}/${file.file_path}`);
    expect((await res.arrayBuffer()).byteLength).toBe(5000);
    const voice = standin.addVoice({ content: Buffer.from("OggS....") });
    expect(voice).toMatchObject({ mime_type: "audio/ogg", duration: 3 });
    expect((await api.getFile(String(voice.file_id))).file_path).toMatch(/^voice\/.+\.oga$/);
    const huge = standin.addFile({
      name: "big.bin",
      mime: "application/octet-stream",
      content: Buffer.alloc(21 * 1024 * 1024),
    });
    expect((await refusal(api.getFile(String(huge.file_id)))).description).toBe(
      "Bad Request: file is too big",
    );
  });

  it("refuses a chat that kicked or blocked the bot with 403, and a deleted one with 400 chat not found", async () => {
    const group = { id: -1007103, type: "supergroup" as const, title: "Ops" };
    standin.userSends(plain.token, { from: ALICE, chat: group, text: "hi" });
    standin.kickBot(plain.token, group.id);
    const kicked = await refusal(api.sendMessage(group.id, "hello?"));
    expect([kicked.error_code, kicked.description]).toEqual([
      403,
      "Forbidden: bot was kicked from the supergroup chat",
    ]);
    standin.userSends(plain.token, { from: ALICE, text: "hi" });
    standin.kickBot(plain.token, ALICE.id);
    expect((await refusal(api.sendMessage(ALICE.id, "hello?"))).description).toBe(
      "Forbidden: bot was blocked by the user",
    );
    const gone = { id: -1007104, type: "supergroup" as const, title: "Gone" };
    standin.userSends(plain.token, { from: ALICE, chat: gone, text: "hi" });
    standin.deleteChat(plain.token, gone.id);
    expect((await refusal(api.sendMessage(gone.id, "x"))).description).toBe("Bad Request: chat not found");
  });

  it("migrates a group: sends to the old id get migrate_to_chat_id, and both service messages arrive", async () => {
    const group = { id: -7105, type: "group" as const, title: "Small" };
    standin.userSends(plain.token, { from: ALICE, chat: group, text: "hi" });
    const before = standin.pendingUpdates(plain.token);
    const chat = standin.migrateGroup(plain.token, { chatId: group.id, by: ALICE });
    expect(chat).toMatchObject({ id: -1007105, type: "supergroup" });
    const err = await refusal(api.sendMessage(group.id, "hello"));
    expect(err.description).toBe("Bad Request: group chat was upgraded to a supergroup chat");
    expect(err.parameters.migrate_to_chat_id).toBe(chat.id);
    expect((await api.sendMessage(chat.id, "hello")).chat.id).toBe(chat.id);
    const updates = await api.getUpdates({ offset: 0, timeout: 0 });
    const service = updates.slice(before).map((u) => u.message);
    expect(service.map((m) => [m?.chat.id, m?.migrate_to_chat_id, m?.migrate_from_chat_id])).toEqual([
      [group.id, chat.id, undefined],
      [chat.id, undefined, group.id],
    ]);
  });
});
