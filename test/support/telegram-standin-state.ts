import type { Json, StandinBot, StandinChat, StoredMessage } from "./telegram-standin-wire.js";

/**
 * What the Bot API stand-in remembers: each bot's updates, poller, webhook, commands
 * and chats, and what all bots of one stand-in share (callback queries, files, records).
 */

/** One chat as one bot sees it: its messages and the next message id. */
export interface ChatRoom {
  chat: StandinChat;
  nextId: number;
  messages: Map<number, StoredMessage>;
}

/** Everything the stand-in keeps for one bot. */
export interface BotState {
  bot: StandinBot;
  nextUpdateId: number;
  updates: Json[];
  allowedUpdates: string[] | undefined;
  poll: { answer: (status: number, body: Json) => void } | undefined;
  webhook: { url: string; secret: string | undefined } | undefined;
  webhookChain: Promise<void>;
  commands: Json[];
  chats: Map<number, ChatRoom>;
  lastSendAt: Map<number, number>;
}

/** What all bots of one stand-in share: callback queries, files, and the records tests read. */
export interface SharedState {
  perChatRate: boolean;
  callbacks: Map<string, { botId: number; answered: boolean; answer?: Json }>;
  files: Map<string, { path: string; content: Buffer; doc: Json }>;
  rateViolations: { chatId: number; gapMs: number }[];
  webhookDeliveries: { botId: number; updateId: number; status: number }[];
}

/** A newly added bot's state: no updates, chats or commands, and no poller or webhook. */
export function newBotState(bot: StandinBot): BotState {
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
  };
}

/** The bot's room for a chat, opened on first use. */
export function chatRoom(state: BotState, chat: StandinChat): ChatRoom {
  let room = state.chats.get(chat.id);
  if (!room) {
    room = { chat, nextId: 1, messages: new Map() };
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
