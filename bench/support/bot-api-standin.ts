import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One message a user sends, made available to getUpdates at `at` (ms on `performance.now()`). */
export interface ScheduledMessage {
  at: number;
  chatId: number;
  text: string;
}

/** A sendMessage the stand-in accepted, as it arrived. */
export interface RecordedSend {
  token: string;
  chatId: number;
  text: string;
  at: number;
}

/** A message that became available to the bot, with the time it did. */
export interface ReleasedMessage {
  token: string;
  chatId: number;
  text: string;
  availableAt: number;
  /** The update that carried it (roomgate's turn id is `tg:<bot id>:<update id>`). */
  updateId: number;
  /** When the bot first had it: a getUpdates answer that held it, or its first webhook post. */
  handedAt?: number;
}

/** Faults the stand-in can inject into sendMessage. */
export interface SendFaults {
  /** Share of sendMessage calls answered 429 (0–1). */
  tooManyRatio: number;
  /** Inclusive range of `retry_after` seconds of those 429s. */
  retryAfter: [number, number];
}

type Json = Record<string, unknown>;

/** How the stand-in posts updates to a webhook, as Telegram does (webhook transport). */
export interface WebhookDelivery {
  /** A delivery not answered within this long counts as failed and is posted again, ms. */
  timeoutMs: number;
  /** The wait before posting a failed update again, ms. */
  retryMs: number;
}

/** What the webhook deliveries met: posts made, and the ones that were not a 2xx. */
export interface WebhookStats {
  posts: number;
  /** Answered with a status other than 2xx (roomgate's 500 after 3 s, a 401, a 404…). */
  refused: number;
  /** No answer: connection refused or reset (a killed `start`), or none within the timeout. */
  unanswered: number;
  /** The status codes of the refused posts, counted. */
  statuses: Record<string, number>;
  /** The longest one update waited, from its first post to the 2xx, ms. */
  longestRetryMs: number;
}

interface BotQueue {
  id: number;
  username: string;
  nextUpdateId: number;
  /** Updates released and not yet confirmed by an offset (polling) or a 2xx (webhook). */
  updates: { update_id: number; message: Json }[];
  /** Released messages not yet handed to the bot, by update id (for `handedAt`). */
  unhanded: Map<number, ReleasedMessage>;
  waiters: Set<() => void>;
  nextMessageId: number;
  /** Set by setWebhook, cleared by deleteWebhook: where and with which secret updates are posted. */
  webhook?: { url: string; secretToken?: string };
}

/**
 * A lean HTTP stand-in for the Bot API for the benchmark and the fault script: it
 * releases scheduled user messages to getUpdates on time whatever the bot does (an
 * open loop), records every accepted sendMessage with its arrival time, and can
 * answer 429s or drop off the network. Methods it does not model answer `true`.
 */
export class BotApiStandin {
  readonly sends: RecordedSend[] = [];
  readonly released: ReleasedMessage[] = [];
  /** sendMessage calls answered 429, and every sendMessage attempt received. */
  tooMany = 0;
  attempts = 0;
  faults: SendFaults = { tooManyRatio: 0, retryAfter: [1, 3] };
  private readonly bots = new Map<string, BotQueue>();
  private readonly sockets = new Set<Socket>();
  private timers = new Set<NodeJS.Timeout>();
  private port = 0;
  private listening = false;
  private closed = false;
  /** Counts of the webhook deliveries (webhook transport only). */
  readonly webhookStats: WebhookStats = {
    posts: 0,
    refused: 0,
    unanswered: 0,
    statuses: {},
    longestRetryMs: 0,
  };

  private constructor(private server: Server) {}

  /** Starts on a free loopback port. */
  static async start(): Promise<BotApiStandin> {
    const standin = new BotApiStandin(createServer());
    await standin.listen(0);
    return standin;
  }

  /** The API root for grammY and for roomgate's `telegram.apiRoot`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Registers a bot and returns its token (`<id>:<secret>`). */
  addBot(id: number, username: string): string {
    const token = `${id}:bench-${username}`;
    this.bots.set(token, {
      id,
      username,
      nextUpdateId: 1,
      updates: [],
      unhanded: new Map(),
      waiters: new Set(),
      nextMessageId: 1,
    });
    return token;
  }

  /** Releases each message to the bot at its time, regardless of replies. */
  schedule(token: string, messages: ScheduledMessage[], users: (chatId: number) => number): void {
    const sorted = [...messages].sort((a, b) => a.at - b.at);
    let i = 0;
    const tick = (): void => {
      const now = performance.now();
      const bot = this.bots.get(token)!;
      while (i < sorted.length && sorted[i]!.at <= now + 0.5) {
        const m = sorted[i++]!;
        const message = {
          message_id: bot.nextMessageId++,
          date: Math.floor(Date.now() / 1000),
          chat:
            m.chatId > 0
              ? { id: m.chatId, type: "private", first_name: "u" }
              : { id: m.chatId, type: "supergroup", title: "g" },
          from: { id: users(m.chatId), is_bot: false, first_name: "u" },
          // In a group the bot reads only what is addressed to it: the message mentions it.
          ...(m.chatId > 0
            ? { text: m.text }
            : {
                text: `@${bot.username} ${m.text}`,
                entities: [{ type: "mention", offset: 0, length: bot.username.length + 1 }],
              }),
        };
        const updateId = bot.nextUpdateId++;
        bot.updates.push({ update_id: updateId, message });
        const releasedMessage: ReleasedMessage = {
          token,
          chatId: m.chatId,
          text: m.text,
          availableAt: performance.now(),
          updateId,
        };
        this.released.push(releasedMessage);
        bot.unhanded.set(updateId, releasedMessage);
      }
      for (const wake of bot.waiters) wake();
      if (i < sorted.length) this.later(tick, sorted[i]!.at - performance.now());
    };
    if (sorted.length > 0) this.later(tick, sorted[0]!.at - performance.now());
  }

  /** Updates released to the bot and not yet confirmed (an offset past them, or a 2xx to their post). */
  pendingUpdates(token: string): number {
    return this.bots.get(token)?.updates.length ?? 0;
  }

  /** Takes the API off the network (connection refused) for `ms`, then back on the same port. */
  async unreachableFor(ms: number): Promise<void> {
    await this.closeServer();
    await new Promise((resolve) => setTimeout(resolve, ms));
    this.server = createServer();
    await this.listen(this.port);
  }

  /**
   * Webhook transport: posts the bot's updates, as they are released, to the URL its
   * setWebhook named, the way Telegram does: a JSON Update per POST, the secret token
   * in X-Telegram-Bot-Api-Secret-Token when setWebhook gave one, one update at a time
   * and in order. An update stays first in the bot's queue until a post of it is
   * answered 2xx: a non-2xx answer, a refused or reset connection, or no answer within
   * `timeoutMs` has it posted again after `retryMs` (Telegram repeats an unsuccessful
   * request; the stand-in never gives up on one, so a lost update is roomgate's). While
   * a webhook is set, getUpdates answers 409, as Telegram's does.
   */
  deliverByWebhook(token: string, delivery: WebhookDelivery): void {
    const bot = this.bots.get(token)!;
    void (async () => {
      let firstPostAt: number | undefined;
      let failedId: number | undefined;
      while (!this.closed) {
        const update = bot.updates[0];
        const hook = bot.webhook;
        if (!update || !hook) {
          await this.wait(bot, 1000);
          continue;
        }
        if (failedId !== update.update_id) firstPostAt = performance.now();
        handOver(bot, [update]);
        const ok = await this.post(hook, update, delivery.timeoutMs);
        if (ok) {
          this.webhookStats.longestRetryMs = Math.max(
            this.webhookStats.longestRetryMs,
            performance.now() - firstPostAt!,
          );
          failedId = undefined;
          if (bot.updates[0] === update) bot.updates.shift();
          continue;
        }
        failedId = update.update_id;
        await new Promise((resolve) => setTimeout(resolve, delivery.retryMs));
      }
    })();
  }

  /** One webhook post: true on a 2xx; counts a refusal or a post without an answer. */
  private async post(
    hook: { url: string; secretToken?: string },
    update: { update_id: number; message: Json },
    timeoutMs: number,
  ): Promise<boolean> {
    this.webhookStats.posts += 1;
    try {
      const res = await fetch(hook.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(hook.secretToken ? { "x-telegram-bot-api-secret-token": hook.secretToken } : {}),
        },
        body: JSON.stringify(update),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return true;
      this.webhookStats.refused += 1;
      this.webhookStats.statuses[res.status] = (this.webhookStats.statuses[res.status] ?? 0) + 1;
      return false;
    } catch {
      this.webhookStats.unanswered += 1;
      return false;
    }
  }

  /** Waits for a release (or setWebhook) on the bot, at most `ms`. */
  private wait(bot: BotQueue, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        bot.waiters.delete(wake);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      bot.waiters.add(wake);
    });
  }

  /** Stops the server and every pending timer. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await this.closeServer();
  }

  private later(fn: () => void, ms: number): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        fn();
      },
      Math.max(0, ms),
    );
    this.timers.add(timer);
  }

  private async listen(port: number): Promise<void> {
    this.server.on("request", (req, res) => void this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server.listen(port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.listening = true;
  }

  private async closeServer(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    for (const bot of this.bots.values()) for (const wake of bot.waiters) wake();
    const closed = new Promise((resolve) => this.server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = /^\/bot([^/]+)\/(\w+)/.exec(req.url ?? "");
    const body = await readJson(req);
    const bot = match ? this.bots.get(match[1]!) : undefined;
    if (!match || !bot) return send(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = match[2]!;
    if (method === "getMe") {
      return send(res, 200, {
        ok: true,
        result: { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username },
      });
    }
    if (method === "setWebhook") {
      const url = String(body.url ?? "");
      const secretToken = body.secret_token === undefined ? undefined : String(body.secret_token);
      bot.webhook = url ? { url, secretToken } : undefined;
      for (const wake of bot.waiters) wake();
      return send(res, 200, {
        ok: true,
        result: true,
        description: url ? "Webhook was set" : "Webhook was deleted",
      });
    }
    if (method === "deleteWebhook") {
      bot.webhook = undefined;
      return send(res, 200, { ok: true, result: true, description: "Webhook was deleted" });
    }
    if (method === "getUpdates" && bot.webhook) {
      return send(res, 409, {
        ok: false,
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      });
    }
    if (method === "getUpdates") return this.getUpdates(bot, body, req, res);
    if (method === "sendMessage") return this.sendMessage(match[1]!, bot, body, res);
    return send(res, 200, { ok: true, result: true });
  }

  private async getUpdates(
    bot: BotQueue,
    body: Json,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const offset = Number(body.offset ?? 0);
    if (offset > 0) bot.updates = bot.updates.filter((u) => u.update_id >= offset);
    const limit = Math.min(100, Number(body.limit ?? 100));
    const deadline = Date.now() + Number(body.timeout ?? 0) * 1000;
    while (bot.updates.length === 0 && Date.now() < deadline && this.listening && !res.destroyed) {
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          bot.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, deadline - Date.now());
        bot.waiters.add(wake);
      });
    }
    if (!this.listening || res.destroyed) return;
    const result = bot.updates.slice(0, limit);
    handOver(bot, result);
    send(res, 200, { ok: true, result });
  }

  private sendMessage(token: string, bot: BotQueue, body: Json, res: ServerResponse): void {
    this.attempts += 1;
    const chatId = Number(body.chat_id);
    if (Math.random() < this.faults.tooManyRatio) {
      this.tooMany += 1;
      const [lo, hi] = this.faults.retryAfter;
      const retry = lo + Math.floor(Math.random() * (hi - lo + 1));
      return send(res, 429, {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${retry}`,
        parameters: { retry_after: retry },
      });
    }
    const text = String(body.text ?? "");
    this.sends.push({ token, chatId, text, at: performance.now() });
    send(res, 200, {
      ok: true,
      result: {
        message_id: bot.nextMessageId++,
        date: Math.floor(Date.now() / 1000),
        chat: chatId > 0 ? { id: chatId, type: "private" } : { id: chatId, type: "supergroup", title: "g" },
        from: { id: bot.id, is_bot: true, first_name: bot.username },
        text,
      },
    });
  }
}

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  if (!text) return {};
  if ((req.headers["content-type"] ?? "").includes("json")) return JSON.parse(text) as Json;
  return Object.fromEntries(new URLSearchParams(text));
}

function send(res: ServerResponse, status: number, body: Json): void {
  if (res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Notes when the bot first had each of these updates (the latency's split in the bench). */
function handOver(bot: BotQueue, updates: { update_id: number }[]): void {
  const now = performance.now();
  for (const u of updates) {
    const m = bot.unhanded.get(u.update_id);
    if (!m) continue;
    m.handedAt = now;
    bot.unhanded.delete(u.update_id);
  }
}
