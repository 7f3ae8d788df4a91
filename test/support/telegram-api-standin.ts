import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { sendGaps } from "./send-gaps.js";
import { standinMethods, type MethodHandler } from "./telegram-standin-methods.js";
import {
  chatRoom,
  newBotState,
  type BotState,
  type SharedState,
  type StandinDraft,
  type StandinTopic,
} from "./telegram-standin-state.js";
import { visibleTo } from "./telegram-standin-ephemeral.js";
import { noteUserTopic } from "./telegram-standin-surfaces.js";
import { deliverByWebhook, getUpdates, wakePoll } from "./telegram-standin-updates.js";
import {
  BadRequest,
  detectEntities,
  failureBody,
  readBody,
  reply,
  stripBookkeeping,
  type ApiCall,
  type InjectedFailure,
  type Json,
  type StandinBot,
  type StandinChat,
  type StandinUser,
  type StoredMessage,
} from "./telegram-standin-wire.js";

export type {
  ApiCall,
  InjectedFailure,
  StandinBot,
  StandinChat,
  StandinUser,
  StoredMessage,
} from "./telegram-standin-wire.js";

/**
 * A local stand-in for the Telegram Bot API: a real HTTP server on loopback that
 * grammY reaches through `client.apiRoot`, behaving like the documented API where
 * roomgate depends on it (long polling, HTML parsing and limits, callback queries,
 * edits, webhooks, files), with a test API to play users and to inject failures.
 */

/** The Bot API stand-in; start it with `TelegramApiStandin.start()`. */
export class TelegramApiStandin {
  /** Every call received, in order. */
  readonly calls: ApiCall[] = [];
  /** sendMessage calls to one chat closer than a second apart (only with `perChatRate`). */
  readonly rateViolations: { chatId: number; gapMs: number }[] = [];
  /** Webhook POSTs made, with the HTTP status the receiver answered (0 = no answer). */
  readonly webhookDeliveries: { botId: number; updateId: number; status: number }[] = [];
  private readonly bots = new Map<string, BotState>();
  private readonly failures = new Map<string, InjectedFailure[]>();
  private readonly chance = new Map<string, { fraction: number; failure: () => InjectedFailure }>();
  private readonly delays = new Map<string, number[]>();
  private readonly shared: SharedState;
  private readonly methods: Record<string, MethodHandler>;
  private nextBotId = 7_000_000_000;
  private nextFile = 1;

  private constructor(
    private readonly server: Server,
    options: { perChatRate: boolean },
  ) {
    // The method table shares these by reference, so the public records stay the arrays tests read.
    this.shared = {
      perChatRate: options.perChatRate,
      callbacks: new Map(),
      files: new Map(),
      migrations: new Map(),
      rateViolations: this.rateViolations,
      webhookDeliveries: this.webhookDeliveries,
    };
    this.methods = standinMethods(this.shared);
  }

  /** Starts the stand-in on a free loopback port. `perChatRate` answers 429 to a second message per chat within a second. */
  static async start(options: { perChatRate?: boolean } = {}): Promise<TelegramApiStandin> {
    const server = createServer();
    const standin = new TelegramApiStandin(server, { perChatRate: options.perChatRate ?? false });
    server.on("request", (req, res) => void standin.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return standin;
  }

  /** The API root to give grammY (`client.apiRoot`) and the config (`telegram.apiRoot`). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Registers a bot and returns its token; `topics` is BotFather's forum topic mode for private chats. */
  addBot(options: { id?: number; username?: string; firstName?: string; topics?: boolean } = {}): StandinBot {
    const id = options.id ?? this.nextBotId++;
    const bot: StandinBot = {
      id,
      token: `${id}:${randomBytes(12).toString("hex")}`,
      username: options.username ?? `standin_${id}_bot`,
      firstName: options.firstName ?? "Stand-in bot",
    };
    this.bots.set(bot.token, newBotState(bot, options.topics ?? false));
    return bot;
  }

  /** Queues an update for a bot (assigning its update_id) and returns the id. */
  pushUpdate(token: string, update: Json): number {
    const state = this.state(token);
    const full = { ...update, update_id: state.nextUpdateId++ };
    state.updates.push(full);
    wakePoll(state);
    if (state.webhook) deliverByWebhook(state, full, this.webhookDeliveries);
    return full.update_id;
  }

  /** A user sends a message (text, or a document from `addFile`); returns the update id and message. */
  userSends(
    token: string,
    input: {
      from: StandinUser;
      chat?: StandinChat;
      text?: string;
      threadId?: number;
      replyTo?: number;
      document?: Json;
      /** PhotoSize[] from `addPhoto`, largest last. */
      photo?: Json[];
      /** A Voice object from `addVoice`. */
      voice?: Json;
      audio?: Json;
      caption?: string;
    },
  ): { updateId: number; message: StoredMessage } {
    const state = this.state(token);
    const chat = input.chat ?? {
      id: input.from.id,
      type: "private" as const,
      first_name: input.from.first_name,
    };
    const room = chatRoom(state, chat);
    const replied = input.replyTo === undefined ? undefined : room.messages.get(input.replyTo);
    const message: StoredMessage = {
      message_id: room.nextId++,
      from: { is_bot: false, ...input.from },
      chat,
      date: Math.floor(Date.now() / 1000),
      ...(input.text !== undefined ? { text: input.text, entities: detectEntities(input.text) } : {}),
      ...(input.document ? { document: input.document } : {}),
      ...(input.photo ? { photo: input.photo } : {}),
      ...(input.voice ? { voice: input.voice } : {}),
      ...(input.audio ? { audio: input.audio } : {}),
      ...(input.caption !== undefined
        ? { caption: input.caption, caption_entities: detectEntities(input.caption) }
        : {}),
      ...(input.threadId !== undefined ? { message_thread_id: input.threadId, is_topic_message: true } : {}),
      ...(replied ? { reply_to_message: stripBookkeeping(replied) } : {}),
    };
    room.messages.set(message.message_id, message);
    room.members.add(input.from.id);
    noteUserTopic(room, input.threadId);
    return { updateId: this.pushUpdate(token, { message: stripBookkeeping(message) }), message };
  }

  /**
   * A user edits a message they sent: the stored message changes and an
   * `edited_message` update carries it, `edit_date` `afterSeconds` after its date.
   */
  userEdits(
    token: string,
    input: { chatId: number; messageId: number; text: string; afterSeconds?: number },
  ): number {
    const state = this.state(token);
    const message = state.chats.get(input.chatId)?.messages.get(input.messageId);
    if (!message) throw new Error(`no message ${input.messageId} in chat ${input.chatId}`);
    const edited: StoredMessage = {
      ...message,
      text: input.text,
      entities: detectEntities(input.text),
      edit_date: message.date + (input.afterSeconds ?? 1),
    };
    state.chats.get(input.chatId)!.messages.set(input.messageId, edited);
    return this.pushUpdate(token, { edited_message: stripBookkeeping(edited) });
  }

  /**
   * A user presses an inline button on one of the bot's messages (an ephemeral one by
   * `ephemeralId`: only its receiver sees it to press); `data` defaults to the first button's.
   */
  userPresses(
    token: string,
    input: { from: StandinUser; chatId: number; messageId: number; ephemeralId?: number; data?: string },
  ): { updateId: number; callbackQueryId: string } {
    const state = this.state(token);
    const room = state.chats.get(input.chatId);
    const message =
      input.ephemeralId === undefined
        ? room?.messages.get(input.messageId)
        : room?.ephemeral.get(input.ephemeralId);
    if (!message) throw new Error(`no message ${input.messageId} in chat ${input.chatId}`);
    if (message.sent?.receiver !== undefined && message.sent.receiver !== input.from.id) {
      throw new Error(`user ${input.from.id} cannot see an ephemeral message for ${message.sent.receiver}`);
    }
    const data = input.data ?? message.reply_markup?.inline_keyboard[0]?.[0]?.callback_data;
    if (data === undefined) throw new Error("the message has no button to press");
    const id = randomBytes(8).toString("hex");
    room!.members.add(input.from.id);
    this.shared.callbacks.set(id, {
      botId: state.bot.id,
      answered: false,
      userId: input.from.id,
      chatId: input.chatId,
      at: Date.now(),
    });
    const updateId = this.pushUpdate(token, {
      callback_query: {
        id,
        from: { is_bot: false, ...input.from },
        message: stripBookkeeping(message),
        chat_instance: String(input.chatId),
        data,
      },
    });
    return { updateId, callbackQueryId: id };
  }

  /** Stores a file that getFile and the file endpoint serve; returns its Document object. */
  addFile(input: { name: string; mime: string; content: string | Buffer; size?: number }): Json {
    const content = Buffer.from(input.content);
    return this.storeFile("documents", content, {
      file_name: input.name,
      mime_type: input.mime,
      file_size: input.size ?? content.byteLength,
    });
  }

  /**
   * Stores a photo as Telegram sends one: several sizes (a small preview, then the
   * full image), each its own file; returns the PhotoSize array, largest last.
   */
  addPhoto(input: { content: Buffer; width?: number; height?: number }): Json[] {
    const width = input.width ?? 1280;
    const height = input.height ?? 960;
    const preview = this.storeFile("photos", input.content.subarray(0, Math.min(64, input.content.length)), {
      width: 90,
      height: Math.round((90 * height) / width),
    });
    const full = this.storeFile("photos", input.content, { width, height });
    return [preview, full];
  }

  /** Stores a voice note (OGG/Opus, as Telegram records them); returns its Voice object. */
  addVoice(input: { content: Buffer; duration?: number; mime?: string; size?: number }): Json {
    return this.storeFile("voice", input.content, {
      duration: input.duration ?? 3,
      mime_type: input.mime ?? "audio/ogg",
      ...(input.size !== undefined ? { file_size: input.size } : {}),
    });
  }

  /** The bot is removed from a group (403 "bot was kicked") or blocked by a user (403 "bot was blocked"). */
  kickBot(token: string, chatId: number): void {
    const room = this.state(token).chats.get(chatId);
    if (!room) throw new Error(`no chat ${chatId}`);
    const description =
      room.chat.type === "private"
        ? "bot was blocked by the user"
        : `bot was kicked from the ${room.chat.type} chat`;
    room.gone = { code: 403, description };
  }

  /** The chat no longer exists for the bot: every call to it gets 400 "chat not found". */
  deleteChat(token: string, chatId: number): void {
    const room = this.state(token).chats.get(chatId);
    if (!room) throw new Error(`no chat ${chatId}`);
    room.gone = { code: 400, description: "chat not found" };
  }

  /**
   * A person upgrades a group to a supergroup: sends to the old id get 400 with
   * `migrate_to_chat_id`, and the bot gets Telegram's two service messages (the old
   * chat's `migrate_to_chat_id`, the new chat's `migrate_from_chat_id`). Returns the new chat.
   */
  migrateGroup(token: string, input: { chatId: number; by: StandinUser; newId?: number }): StandinChat {
    const state = this.state(token);
    const old = state.chats.get(input.chatId);
    if (!old || old.chat.type !== "group") throw new Error(`chat ${input.chatId} is not a known group`);
    const newId = input.newId ?? Number(`-100${Math.abs(input.chatId)}`);
    const chat: StandinChat = { id: newId, type: "supergroup", title: old.chat.title ?? "Group" };
    this.shared.migrations.set(input.chatId, newId);
    for (const bot of this.bots.values()) {
      const room = bot.chats.get(input.chatId);
      if (room) room.migratedTo = newId;
    }
    const from = { is_bot: false, ...input.by };
    const date = Math.floor(Date.now() / 1000);
    const notice = (room: ReturnType<typeof chatRoom>, field: Json) => {
      const message = { message_id: room.nextId++, from, chat: room.chat, date, ...field };
      this.pushUpdate(token, { message });
    };
    notice(old, { migrate_to_chat_id: newId });
    notice(chatRoom(state, chat), { migrate_from_chat_id: input.chatId });
    return chat;
  }

  /** A person deletes a topic: its messages go, and sends into it get "message thread not found". */
  userDeletesTopic(token: string, chatId: number, threadId: number): void {
    const room = this.state(token).chats.get(chatId);
    const topic = room?.topics.get(threadId);
    if (!room || !topic) throw new Error(`no topic ${threadId} in chat ${chatId}`);
    topic.deleted = true;
    for (const [id, message] of room.messages)
      if (message.message_thread_id === threadId) room.messages.delete(id);
  }

  /** The topics of a chat as the bot made or saw them, by message_thread_id. */
  topics(token: string, chatId: number): Map<number, StandinTopic> {
    return this.state(token).chats.get(chatId)?.topics ?? new Map();
  }

  /**
   * The person presses Stop on a draft the bot streams with `can_stop`: the bot gets a
   * `stopped_message_generation` update (when its allowed_updates take it) and the
   * draft goes. Returns the update id.
   */
  userStops(token: string, chatId: number, draftId: number): number {
    const room = this.state(token).chats.get(chatId);
    const draft = room?.drafts.findLast((d) => d.draftId === draftId);
    if (!room || !draft) throw new Error(`no draft ${draftId} in chat ${chatId}`);
    if (!draft.canStop) throw new Error(`draft ${draftId} shows no Stop button (can_stop)`);
    if (draft.endedAt !== undefined || draft.stoppedAt !== undefined)
      throw new Error(`draft ${draftId} is gone`);
    for (const d of room.drafts) if (d.draftId === draftId) d.stoppedAt ??= Date.now();
    return this.pushUpdate(token, {
      stopped_message_generation: {
        chat: room.chat,
        ...(draft.threadId === undefined ? {} : { message_thread_id: draft.threadId }),
        draft_id: draftId,
      },
    });
  }

  /** A user is in a group without having written there (ephemeral messages reach members only). */
  addMember(token: string, chat: StandinChat, user: StandinUser): void {
    chatRoom(this.state(token), chat).members.add(user.id);
  }

  /** The bot's messages in a chat as one member sees them: everyone's, and the ephemeral ones for them. */
  visibleTo(token: string, chatId: number, userId: number): StoredMessage[] {
    return visibleTo(this.state(token).chats.get(chatId), userId);
  }

  /** The drafts a bot streamed into a chat, oldest first. */
  drafts(token: string, chatId: number): StandinDraft[] {
    return this.state(token).chats.get(chatId)?.drafts ?? [];
  }

  private storeFile(kind: "documents" | "photos" | "voice", content: Buffer, fields: Json): Json {
    const n = this.nextFile++;
    const object = {
      file_id: `file-${n}`,
      file_unique_id: `u${n}`,
      file_size: content.byteLength,
      ...fields,
    };
    const ext = { documents: "", photos: ".jpg", voice: ".oga" }[kind];
    this.shared.files.set(object.file_id, { path: `${kind}/file_${n}${ext}`, content, doc: object });
    return object;
  }

  /** The next `times` calls of `method` (any bot) fail this way. */
  inject(method: string, failure: InjectedFailure, times = 1): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(failure);
    this.failures.set(method, queue);
  }

  /** From now on, each call of `method` fails with probability `fraction` (failure drawn per call). */
  injectRandom(method: string, fraction: number, failure: () => InjectedFailure): void {
    this.chance.set(method, { fraction, failure });
  }

  /** The next call of `method` is carried out at once but answered only after `ms` (a slow network). */
  delayAnswer(method: string, ms: number): void {
    this.delays.set(method, [...(this.delays.get(method) ?? []), ms]);
  }

  /** Drops failures injected for a method that were not used up. */
  clearInjected(method: string): void {
    this.failures.delete(method);
    this.chance.delete(method);
  }

  /** Attempts that reached a chat less than `minMs` after the previous one (all recorded calls). */
  sendGaps(minMs = 1000): { chatId: number; gapMs: number }[] {
    return sendGaps(this.calls, minMs);
  }

  /** Calls of one method, optionally of one bot only. */
  callsTo(method: string, botId?: number): ApiCall[] {
    return this.calls.filter((c) => c.method === method && (botId === undefined || c.botId === botId));
  }

  /** The bot's messages in a chat (and topic), oldest first. */
  botMessages(token: string, chatId: number, threadId?: number): StoredMessage[] {
    const messages = [...(this.state(token).chats.get(chatId)?.messages.values() ?? [])];
    return messages.filter(
      (m) => m.sent !== undefined && (threadId === undefined || m.message_thread_id === threadId),
    );
  }

  /** How a callback query was answered (undefined while unanswered). */
  callbackAnswer(id: string): Json | undefined {
    return this.shared.callbacks.get(id)?.answer;
  }

  /** Whether a long poll of this bot is being held open right now. */
  isPolling(token: string): boolean {
    return this.state(token).poll !== undefined;
  }

  /** Updates still held for a bot (not yet confirmed by an offset). */
  pendingUpdates(token: string): number {
    return this.state(token).updates.length;
  }

  /** The commands last set with setMyCommands. */
  commands(token: string): Json[] {
    return this.state(token).commands;
  }

  /** Stops the server, ending any held long poll. */
  async close(): Promise<void> {
    for (const state of this.bots.values()) state.poll?.answer(200, { ok: true, result: [] });
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private state(token: string): BotState {
    const state = this.bots.get(token);
    if (!state) throw new Error("unknown bot token");
    return state;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // When the request reached the API, before its body is read: what a rate limit counts.
    const arrived = Date.now();
    const url = new URL(req.url ?? "/", "http://standin");
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) return this.serveFile(file[1]!, file[2]!, res);
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const state = call ? this.bots.get(call[1]!) : undefined;
    if (!call || !state) return reply(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = call[2]!;
    const params = { ...Object.fromEntries(url.searchParams), ...(await readBody(req)) };
    const delay = this.delays.get(method)?.shift();
    const record = (status: number, body: Json) => {
      this.calls.push({
        botId: state.bot.id,
        method,
        params,
        at: arrived,
        ok: body.ok === true,
        response: body,
      });
      if (delay === undefined) reply(res, status, body);
      else setTimeout(() => reply(res, status, body), delay);
    };
    const random = this.chance.get(method);
    const failure =
      this.failures.get(method)?.shift() ??
      (random && Math.random() < random.fraction ? random.failure() : undefined);
    if (failure) return record(failure.status, failureBody(failure));
    if (method === "getUpdates") return getUpdates(state, params, res, record);
    const handler = this.methods[method];
    if (!handler) return record(404, { ok: false, error_code: 404, description: "Not Found" });
    try {
      record(200, { ok: true, result: handler(state, params) });
    } catch (err) {
      if (!(err instanceof BadRequest)) {
        record(500, { ok: false, error_code: 500, description: `stand-in failure: ${String(err)}` });
        return;
      }
      const given = {
        ...err.parameters,
        ...(err.retryAfter === undefined ? {} : { retry_after: err.retryAfter }),
      };
      const parameters = Object.keys(given).length === 0 ? {} : { parameters: given };
      record(err.code, { ok: false, error_code: err.code, description: err.message, ...parameters });
    }
  }

  private serveFile(token: string, path: string, res: ServerResponse): void {
    const file = [...this.shared.files.values()].find((f) => f.path === path);
    if (!this.bots.has(token) || !file)
      return reply(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(file.content);
  }
}
