import type { Json, StandinBot, StandinChat, StoredMessage } from "./telegram-standin-wire.js";

/**
 * What the Bot API stand-in remembers: each bot's updates, poller, webhook, commands
 * and chats, and what all bots of one stand-in share (callback queries, files, records).
 */

/** A topic of a forum supergroup or of a private chat with a bot that has topics enabled. */
export interface StandinTopic {
  name: string;
  iconColor: number;
  /** Set when a person deleted the topic: sends into it fail with "message thread not found". */
  deleted: boolean;
}

/** One draft a bot streamed with sendMessageDraft, as the stand-in saw it. */
export interface StandinDraft {
  draftId: number;
  text: string;
  threadId: number | undefined;
  at: number;
  /** When a message the bot sent afterwards ended the draft (Telegram removes it then). */
  endedAt?: number;
  /** `can_stop`: the person sees a Stop button on the draft. */
  canStop: boolean;
  /** When the person pressed Stop on this draft (a `stopped_message_generation` went to the bot). */
  stoppedAt?: number;
}

/** One chat as one bot sees it: its messages, the next message id, and what the chat became. */
export interface ChatRoom {
  chat: StandinChat;
  nextId: number;
  messages: Map<number, StoredMessage>;
  /** Topics by message_thread_id (the id of the message that created the topic). */
  topics: Map<number, StandinTopic>;
  drafts: StandinDraft[];
  /** Messages only one member sees (ephemeral_message_parameters), by ephemeral_message_id. */
  ephemeral: Map<number, StoredMessage>;
  nextEphemeralId: number;
  /** Users known to be in the chat: they wrote or pressed here, or a test added them. */
  members: Set<number>;
  /** Why this chat refuses the bot for good: kicked, blocked, deleted (Telegram's code and description). */
  gone?: { code: 400 | 403; description: string };
  /** The supergroup this group was migrated to: sends here fail with migrate_to_chat_id. */
  migratedTo?: number;
}

/** Everything the stand-in keeps for one bot. */
export interface BotState {
  bot: StandinBot;
  nextUpdateId: number;
  updates: Json[];
  allowedUpdates: string[] | undefined;
  poll: { answer: (status: number, body: Json) => void } | undefined;
  /** The webhook setWebhook set, and Telegram's record of its last failed delivery (getWebhookInfo). */
  webhook:
    { url: string; secret: string | undefined; lastError?: { date: number; message: string } } | undefined;
  webhookChain: Promise<void>;
  commands: Json[];
  chats: Map<number, ChatRoom>;
  lastSendAt: Map<number, number>;
  /** Forum topic mode in private chats, as BotFather sets it (getMe's has_topics_enabled). */
  topicsEnabled: boolean;
}

/** What all bots of one stand-in share: callback queries, files, and the records tests read. */
export interface SharedState {
  perChatRate: boolean;
  /** Callback queries: whose press, in which chat, when (an ephemeral reply to one must come within 15 s). */
  callbacks: Map<
    string,
    { botId: number; answered: boolean; answer?: Json; userId: number; chatId: number; at: number }
  >;
  files: Map<string, { path: string; content: Buffer; doc: Json }>;
  /** Chat id → the supergroup it was migrated to, for every bot (a migration is the chat's, not a bot's). */
  migrations: Map<number, number>;
  rateViolations: { chatId: number; gapMs: number }[];
  webhookDeliveries: { botId: number; updateId: number; status: number }[];
}

/** A newly added bot's state: no updates, chats or commands, and no poller or webhook. */
export function newBotState(bot: StandinBot, topicsEnabled = false): BotState {
  return {
    bot,
    nextUpdateId: 100_000 + Math.floor(Math.random() * 1000),
    updates: [],
    allowedUpdates: undefined,
    poll: undefined,
    webhook: undefined,
    webhookChain: Promise.resolve(),
    commands: [],
    chats: new Map(),
    lastSendAt: new Map(),
    topicsEnabled,
  };
}

/** The bot's room for a chat, opened on first use. */
export function chatRoom(state: BotState, chat: StandinChat): ChatRoom {
  let room = state.chats.get(chat.id);
  if (!room) {
    room = {
      chat,
      nextId: 1,
      messages: new Map(),
      topics: new Map(),
      drafts: [],
      ephemeral: new Map(),
      nextEphemeralId: 1,
      members: new Set(chat.type === "private" ? [chat.id] : []),
    };
    state.chats.set(chat.id, room);
  }
  return room;
}

/** The chat behind an id the bot sends to: the one it has seen, else a private chat or a supergroup by sign. */
export function knownChat(state: BotState, chatId: number): StandinChat {
  return (
    state.chats.get(chatId)?.chat ??
    (chatId > 0
      ? { id: chatId, type: "private", first_name: "User" }
      : { id: chatId, type: "supergroup", title: "Group" })
  );
}
