import type { BotState, ChatRoom } from "./telegram-standin-state.js";
import { BadRequest, parseText, type Json } from "./telegram-standin-wire.js";

/**
 * The Bot API stand-in's rules for where a bot may still write: forum topics (in
 * supergroups, and in private chats of bots with topic mode enabled), drafts, chats
 * that refuse the bot for good (kicked, blocked, gone) and groups migrated to a
 * supergroup. Each check throws the BadRequest Telegram answers.
 */

/** The icon colours createForumTopic accepts (RGB). */
export const TOPIC_ICON_COLORS = [0x6fb9f0, 0xffd67e, 0xcb86db, 0x8eee98, 0xff93b2, 0xfb6f5f];

/** Characters a topic name may have. */
const TOPIC_NAME_MAX = 128;

/** Characters of draft text after entity parsing. */
const DRAFT_LIMIT = 4096;

/**
 * A chat the bot can no longer write to: kicked or blocked (403), deleted (400 chat
 * not found), or a group upgraded to a supergroup (400 with `migrate_to_chat_id`).
 */
export function checkReachable(room: ChatRoom | undefined): void {
  if (!room) return;
  if (room.gone) throw new BadRequest(room.gone.description, room.gone.code);
  if (room.migratedTo !== undefined) {
    throw new BadRequest("group chat was upgraded to a supergroup chat", 400, undefined, {
      migrate_to_chat_id: room.migratedTo,
    });
  }
}

/**
 * `message_thread_id` must name a live topic of a chat that has topics: a forum
 * supergroup, or a private chat of a bot with topic mode enabled. A deleted topic, a
 * made-up id and the General topic (which is addressed without an id) are refused.
 */
export function checkThread(state: BotState, room: ChatRoom, p: Json): number | undefined {
  if (p.message_thread_id === undefined) return undefined;
  const threadId = Number(p.message_thread_id);
  if (room.chat.type === "private" && !state.topicsEnabled) throw new BadRequest("message thread not found");
  const topic = room.topics.get(threadId);
  if (!topic || topic.deleted) throw new BadRequest("message thread not found");
  return threadId;
}

/** A person's message in a topic shows that the topic exists (they made it, or it was made before the test). */
export function noteUserTopic(room: ChatRoom, threadId: number | undefined): void {
  if (threadId === undefined || room.topics.has(threadId)) return;
  room.topics.set(threadId, { name: `Topic ${threadId}`, iconColor: TOPIC_ICON_COLORS[0]!, deleted: false });
}

/**
 * createForumTopic: in a forum supergroup, or in a private chat when the bot has topic
 * mode enabled; a name of 1–128 characters and one of the six icon colours. The topic's
 * id is the id of the service message that opens it, as in Telegram.
 */
export function createForumTopic(state: BotState, room: ChatRoom, p: Json): Json {
  checkReachable(room);
  const isForum =
    room.chat.type === "private"
      ? state.topicsEnabled
      : room.chat.type === "supergroup" && room.chat.is_forum;
  if (!isForum) throw new BadRequest("the chat is not a forum");
  const name = typeof p.name === "string" ? p.name : "";
  if (name.length === 0) throw new BadRequest("TOPIC_TITLE_EMPTY");
  if (name.length > TOPIC_NAME_MAX) throw new BadRequest("TOPIC_TITLE_TOO_LONG");
  const iconColor = p.icon_color === undefined ? TOPIC_ICON_COLORS[0]! : Number(p.icon_color);
  if (!TOPIC_ICON_COLORS.includes(iconColor)) throw new BadRequest("TOPIC_ICON_COLOR_INVALID");
  const threadId = room.nextId++;
  room.topics.set(threadId, { name, iconColor, deleted: false });
  room.messages.set(threadId, {
    message_id: threadId,
    message_thread_id: threadId,
    from: { id: state.bot.id, is_bot: true, first_name: state.bot.firstName, username: state.bot.username },
    chat: room.chat,
    date: Math.floor(Date.now() / 1000),
    forum_topic_created: { name, icon_color: iconColor },
    is_topic_message: true,
  });
  return { message_thread_id: threadId, name, icon_color: iconColor };
}

/**
 * sendMessageDraft: private chats of bots with topic mode enabled only; a non-zero
 * integer draft id; 0–4096 characters of text after parsing (empty shows "Thinking…");
 * `can_stop` shows the person a Stop button (pressed: `stopped_message_generation`).
 */
export function sendMessageDraft(state: BotState, room: ChatRoom, p: Json): true {
  checkReachable(room);
  if (room.chat.type !== "private") throw new BadRequest("TEXTDRAFT_PEER_INVALID");
  if (!state.topicsEnabled) throw new BadRequest("bot has no forum topic mode enabled");
  const draftId = Number(p.draft_id);
  if (!Number.isInteger(draftId) || draftId === 0) throw new BadRequest("draft_id must be non-zero");
  const text = p.text === undefined || p.text === "" ? "" : parseText(p).text;
  if (text.length > DRAFT_LIMIT) throw new BadRequest("message is too long");
  const threadId = checkThread(state, room, p);
  room.drafts.push({ draftId, text, threadId, at: Date.now(), canStop: p.can_stop === true });
  return true;
}

/** A message the bot sends ends the drafts still showing in that chat and topic. */
export function endDrafts(room: ChatRoom, threadId: number | undefined): void {
  const now = Date.now();
  for (const draft of room.drafts) {
    if (draft.endedAt === undefined && draft.threadId === threadId) draft.endedAt = now;
  }
}
