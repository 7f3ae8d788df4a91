import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  BadRequest,
  botUser,
  conflict,
  detectEntities,
  failureBody,
  notModified,
  parseMarkup,
  parseText,
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

interface BotState {
  bot: StandinBot;
  nextUpdateId: number;
  updates: Json[];
  allowedUpdates: string[] | undefined;
  poll: { answer: (status: number, body: Json) => void } | undefined;
  webhook: { url: string; secret: string | undefined } | undefined;
  webhookChain: Promise<void>;
  commands: Json[];
  chats: Map<number, { chat: StandinChat; nextId: number; messages: Map<number, StoredMessage> }>;
  lastSendAt: Map<number, number>;
}

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
  private readonly callbacks = new Map<string, { botId: number; answered: boolean; answer?: Json }>();
  private readonly files = new Map<string, { path: string; content: Buffer; doc: Json }>();
  private nextBotId = 7_000_000_000;
  private nextFile = 1;

  private constructor(
    private readonly server: Server,
    private readonly options: { perChatRate: boolean },
  ) {}

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

  /** Registers a bot and returns its token. */
  addBot(options: { id?: number; username?: string; firstName?: string } = {}): StandinBot {
    const id = options.id ?? this.nextBotId++;
    const bot: StandinBot = {
      id,
      token: `${id}:${randomBytes(12).toString("hex")}`,
      username: options.username ?? `standin_${id}_bot`,
      firstName: options.firstName ?? "Stand-in bot",
    };
    this.bots.set(bot.token, {
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
    });
    return bot;
  }

  /** Queues an update for a bot (assigning its update_id) and returns the id. */
  pushUpdate(token: string, update: Json): number {
    const state = this.state(token);
    const full = { ...update, update_id: state.nextUpdateId++ };
    state.updates.push(full);
    this.wakePoll(state);
    if (state.webhook) this.deliverByWebhook(state, full);
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
      caption?: string;
    },
  ): { updateId: number; message: StoredMessage } {
    const state = this.state(token);
    const chat = input.chat ?? {
      id: input.from.id,
      type: "private" as const,
      first_name: input.from.first_name,
    };
    const room = this.chat(state, chat);
    const replied = input.replyTo === undefined ? undefined : room.messages.get(input.replyTo);
    const message: StoredMessage = {
      message_id: room.nextId++,
      from: { is_bot: false, ...input.from },
      chat,
      date: Math.floor(Date.now() / 1000),
      ...(input.text !== undefined ? { text: input.text, entities: detectEntities(input.text) } : {}),
      ...(input.document ? { document: input.document } : {}),
      ...(input.caption !== undefined
        ? { caption: input.caption, caption_entities: detectEntities(input.caption) }
        : {}),
      ...(input.threadId !== undefined ? { message_thread_id: input.threadId, is_topic_message: true } : {}),
      ...(replied ? { reply_to_message: stripBookkeeping(replied) } : {}),
    };
    room.messages.set(message.message_id, message);
    return { updateId: this.pushUpdate(token, { message: stripBookkeeping(message) }), message };
  }

  /** A user presses an inline button on one of the bot's messages; `data` defaults to the first button's. */
  userPresses(
    token: string,
    input: { from: StandinUser; chatId: number; messageId: number; data?: string },
  ): { updateId: number; callbackQueryId: string } {
    const state = this.state(token);
    const message = state.chats.get(input.chatId)?.messages.get(input.messageId);
    if (!message) throw new Error(`no message ${input.messageId} in chat ${input.chatId}`);
    const data = input.data ?? message.reply_markup?.inline_keyboard[0]?.[0]?.callback_data;
    if (data === undefined) throw new Error("the message has no button to press");
    const id = randomBytes(8).toString("hex");
    this.callbacks.set(id, { botId: state.bot.id, answered: false });
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
    const n = this.nextFile++;
    const content = Buffer.from(input.content);
    const doc = {
      file_id: `file-${n}`,
      file_unique_id: `u${n}`,
      file_name: input.name,
      mime_type: input.mime,
      file_size: input.size ?? content.byteLength,
    };
    this.files.set(doc.file_id, { path: `documents/file_${n}`, content, doc });
    return doc;
  }

  /** The next `times` calls of `method` (any bot) fail this way. */
  inject(method: string, failure: InjectedFailure, times = 1): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(failure);
    this.failures.set(method, queue);
  }

  /** Drops failures injected for a method that were not used up. */
  clearInjected(method: string): void {
    this.failures.delete(method);
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
    return this.callbacks.get(id)?.answer;
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

  private chat(state: BotState, chat: StandinChat) {
    let room = state.chats.get(chat.id);
    if (!room) {
      room = { chat, nextId: 1, messages: new Map() };
      state.chats.set(chat.id, room);
    }
    return room;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://standin");
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) return this.serveFile(file[1]!, file[2]!, res);
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    const state = call ? this.bots.get(call[1]!) : undefined;
    if (!call || !state) return reply(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = call[2]!;
    const params = { ...Object.fromEntries(url.searchParams), ...(await readBody(req)) };
    const record = (status: number, body: Json) => {
      this.calls.push({
        botId: state.bot.id,
        method,
        params,
        at: Date.now(),
        ok: body.ok === true,
        response: body,
      });
      reply(res, status, body);
    };
    const failure = this.failures.get(method)?.shift();
    if (failure) return record(failure.status, failureBody(failure));
    if (method === "getUpdates") return this.getUpdates(state, params, res, record);
    const handler = this.methods[method];
    if (!handler) return record(404, { ok: false, error_code: 404, description: "Not Found" });
    try {
      record(200, { ok: true, result: handler(state, params) });
    } catch (err) {
      if (!(err instanceof BadRequest)) {
        record(500, { ok: false, error_code: 500, description: `stand-in failure: ${String(err)}` });
        return;
      }
      const parameters = err.retryAfter === undefined ? {} : { parameters: { retry_after: err.retryAfter } };
      record(err.code, { ok: false, error_code: err.code, description: err.message, ...parameters });
    }
  }

  private getUpdates(
    state: BotState,
    params: Json,
    res: ServerResponse,
    record: (status: number, body: Json) => void,
  ): void {
    if (state.webhook) {
      return record(
        409,
        conflict(
          "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
        ),
      );
    }
    // Like Telegram, a newer getUpdates ends the older one with 409 Conflict.
    state.poll?.answer(
      409,
      conflict("terminated by other getUpdates request; make sure that only one bot instance is running"),
    );
    const offset = Number(params.offset ?? 0);
    if (offset > 0) state.updates = state.updates.filter((u) => (u.update_id as number) >= offset);
    else if (offset < 0) state.updates = state.updates.slice(offset);
    if (Array.isArray(params.allowed_updates)) state.allowedUpdates = params.allowed_updates as string[];
    const allowed = state.allowedUpdates;
    if (allowed && allowed.length > 0) {
      state.updates = state.updates.filter((u) => Object.keys(u).some((k) => allowed.includes(k)));
    }
    const limit = Math.max(1, Math.min(Number(params.limit ?? 100), 100));
    const ready = () => state.updates.slice(0, limit);
    const timeout = Number(params.timeout ?? 0);
    if (state.updates.length > 0 || timeout <= 0) return record(200, { ok: true, result: ready() });
    let done = false;
    const poll = {
      answer: (status: number, body: Json) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (state.poll === poll) state.poll = undefined;
        record(status, body.ok === true ? { ok: true, result: ready() } : body);
      },
    };
    const timer = setTimeout(() => poll.answer(200, { ok: true }), timeout * 1000);
    state.poll = poll;
    // A poller that goes away (stopped, aborted) no longer holds the token.
    res.once("close", () => {
      done = true;
      clearTimeout(timer);
      if (state.poll === poll) state.poll = undefined;
    });
  }

  private wakePoll(state: BotState): void {
    // Deferred, so that updates pushed together arrive in one batch, as Telegram batches them.
    setImmediate(() => state.poll?.answer(200, { ok: true }));
  }

  private deliverByWebhook(state: BotState, update: Json): void {
    const webhook = state.webhook!;
    state.webhookChain = state.webhookChain.then(async () => {
      for (let attempt = 1; attempt <= 20; attempt++) {
        let status = 0;
        try {
          const res = await fetch(webhook.url, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(webhook.secret ? { "x-telegram-bot-api-secret-token": webhook.secret } : {}),
            },
            body: JSON.stringify(update),
          });
          status = res.status;
          await res.arrayBuffer();
        } catch {
          status = 0;
        }
        this.webhookDeliveries.push({ botId: state.bot.id, updateId: update.update_id as number, status });
        if (status >= 200 && status < 300) {
          state.updates = state.updates.filter((u) => u !== update);
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    });
  }

  private serveFile(token: string, path: string, res: ServerResponse): void {
    const file = [...this.files.values()].find((f) => f.path === path);
    if (!this.bots.has(token) || !file)
      return reply(res, 404, { ok: false, error_code: 404, description: "Not Found" });
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(file.content);
  }

  private sendMessage(state: BotState, p: Json): StoredMessage {
    const chatId = Number(p.chat_id);
    if (!Number.isFinite(chatId)) throw new BadRequest("chat_id is empty");
    const { text, entities } = parseText(p);
    const markup = parseMarkup(p.reply_markup);
    const room = this.chat(state, knownChat(state, chatId));
    const replyTo = p.reply_parameters as
      { message_id?: number; allow_sending_without_reply?: boolean } | undefined;
    if (
      replyTo?.message_id !== undefined &&
      !room.messages.has(replyTo.message_id) &&
      !replyTo.allow_sending_without_reply
    ) {
      throw new BadRequest("message to be replied not found");
    }
    if (this.options.perChatRate) {
      const last = state.lastSendAt.get(chatId);
      const now = Date.now();
      // A little slack for the event loop: the limiter spaces sends by a full second.
      if (last !== undefined && now - last < 700) {
        this.rateViolations.push({ chatId, gapMs: now - last });
        throw new BadRequest("Too Many Requests: retry after 1", 429, 1);
      }
      state.lastSendAt.set(chatId, now);
    }
    const message: StoredMessage = {
      message_id: room.nextId++,
      from: botUser(state.bot),
      chat: room.chat,
      date: Math.floor(Date.now() / 1000),
      text,
      ...(entities.length > 0 ? { entities } : {}),
      ...(p.message_thread_id !== undefined
        ? { message_thread_id: Number(p.message_thread_id), is_topic_message: true }
        : {}),
      ...(markup ? { reply_markup: markup } : {}),
      sent: {
        ...(typeof p.text === "string" ? { html: p.text } : {}),
        ...(typeof p.parse_mode === "string" ? { parse_mode: p.parse_mode } : {}),
        ...(p.link_preview_options ? { link_preview_options: p.link_preview_options as Json } : {}),
        ...(replyTo?.message_id !== undefined ? { reply_to: replyTo.message_id } : {}),
        edits: 0,
      },
    };
    room.messages.set(message.message_id, message);
    return message;
  }

  private editable(state: BotState, p: Json): StoredMessage {
    const message = state.chats.get(Number(p.chat_id))?.messages.get(Number(p.message_id));
    if (!message) throw new BadRequest("message to edit not found");
    if (!message.sent) throw new BadRequest("message can't be edited");
    return message;
  }

  private readonly methods: Record<string, (state: BotState, p: Json) => unknown> = {
    getMe: (state) => ({
      ...botUser(state.bot),
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    }),
    sendMessage: (state, p) => stripBookkeeping(this.sendMessage(state, p)),
    editMessageReplyMarkup: (state, p) => {
      const message = this.editable(state, p);
      const markup = parseMarkup(p.reply_markup);
      if (JSON.stringify(markup) === JSON.stringify(message.reply_markup)) throw notModified();
      if (markup) message.reply_markup = markup;
      else delete message.reply_markup;
      message.sent!.edits++;
      return stripBookkeeping(message);
    },
    editMessageText: (state, p) => {
      const message = this.editable(state, p);
      const { text, entities } = parseText(p);
      const markup = parseMarkup(p.reply_markup);
      if (text === message.text && JSON.stringify(markup) === JSON.stringify(message.reply_markup))
        throw notModified();
      Object.assign(message, { text, entities });
      if (markup) message.reply_markup = markup;
      else delete message.reply_markup;
      message.sent!.edits++;
      return stripBookkeeping(message);
    },
    answerCallbackQuery: (state, p) => {
      const query = this.callbacks.get(String(p.callback_query_id));
      if (!query || query.botId !== state.bot.id || query.answered) {
        throw new BadRequest("query is too old and response timeout expired or query ID is invalid");
      }
      query.answered = true;
      query.answer = { text: p.text, show_alert: p.show_alert };
      return true;
    },
    sendChatAction: (_state, p) => {
      if (p.chat_id === undefined || typeof p.action !== "string") throw new BadRequest("chat_id is empty");
      return true;
    },
    setMyCommands: (state, p) => {
      const commands = p.commands as { command: string; description: string }[];
      if (!commands.every((c) => /^[a-z0-9_]{1,32}$/.test(c.command) && c.description.length <= 256)) {
        throw new BadRequest("BOT_COMMAND_INVALID");
      }
      state.commands = commands;
      return true;
    },
    getMyCommands: (state) => state.commands,
    deleteWebhook: (state, p) => {
      state.webhook = undefined;
      if (p.drop_pending_updates === true) state.updates = [];
      return true;
    },
    setWebhook: (state, p) => {
      state.webhook = { url: String(p.url), secret: p.secret_token as string | undefined };
      state.poll?.answer(409, conflict("terminated by setWebhook request"));
      for (const update of state.updates) this.deliverByWebhook(state, update);
      return true;
    },
    getWebhookInfo: (state) => ({
      url: state.webhook?.url ?? "",
      has_custom_certificate: false,
      pending_update_count: state.updates.length,
    }),
    getFile: (_state, p) => {
      const file = this.files.get(String(p.file_id));
      if (!file) throw new BadRequest("invalid file_id");
      return { ...file.doc, file_path: file.path };
    },
  };
}

function knownChat(state: BotState, chatId: number): StandinChat {
  return (
    state.chats.get(chatId)?.chat ??
    (chatId > 0
      ? { id: chatId, type: "private", first_name: "User" }
      : { id: chatId, type: "supergroup", title: "Group" })
  );
}
