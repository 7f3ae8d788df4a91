import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { webhookCallback, type Bot } from "grammy";
import type { Update } from "grammy/types";
import type { Receiver } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import type { OutageNoticeOptions } from "../edge/outage-notices.js";
import { ALLOWED_UPDATES } from "./polling-receiver.js";
import { loggableError } from "./loggable-error.js";
import { TelegramOutageNotices, type NoticeLimits } from "./outage-notices.js";

/** One bot served by the webhook server: its grammY bot and where its updates go. */
export interface WebhookBot {
  botId: number;
  bot: Bot;
  receive(update: Update): Promise<void>;
}

/** Where the webhook server listens and what Telegram is told. */
export interface WebhookOptions {
  /** Public base URL; each bot's webhook is `<url>/<bot id>`. */
  url: string;
  host: string;
  port: number;
  /** The path served, `<path>/<bot id>`; default: the url's path. */
  path?: string;
  /** Sent by Telegram in X-Telegram-Bot-Api-Secret-Token and checked on every request. */
  secretToken: string;
}

/**
 * Webhook mode: one HTTP server for all bots, each at exactly `<path>/<bot id>`,
 * each request checked against the secret token by grammY's webhookCallback (in
 * constant time, before the body is read). Anything else is a 404. An update that
 * cannot be enqueued answers 500 so that Telegram delivers it again; when its deliveries
 * keep failing, its person is told once (outage-notices.ts), and the update is still
 * confirmed only once it is queued.
 */
export class WebhookReceiver implements Receiver {
  private server: Server | undefined;
  private readonly handlers = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>();

  constructor(
    private readonly bots: WebhookBot[],
    private readonly options: WebhookOptions,
    private readonly log: Logger,
    notices?: OutageNoticeOptions,
    /** The send windows, where the notices count. */
    noticeLimits?: Omit<NoticeLimits, "botId">,
  ) {
    for (const { botId, bot, receive } of bots) {
      const limits = noticeLimits && { ...noticeLimits, botId };
      const told = new TelegramOutageNotices(bot.api, log, notices, limits);
      // No bot.catch: an error must reach webhookCallback's caller to become a 500.
      bot.use(async (ctx) => {
        const update = ctx.update;
        try {
          // Only a chat just told waits, so that its answer comes after the notice.
          await told.beforeQueue(update);
          await receive(update);
        } catch (err) {
          told.failed(update, err);
          throw err;
        }
        told.queued(update);
      });
      this.handlers.set(
        `${this.basePath}/${botId}`,
        webhookCallback(bot, "http", { secretToken: options.secretToken }),
      );
    }
  }

  /** The served path without its trailing slash: `path`, else the public url's path. */
  private get basePath(): string {
    return (this.options.path ?? new URL(this.options.url).pathname).replace(/\/+$/, "");
  }

  /** The port the server listens on (useful when configured as 0). */
  get port(): number {
    const address = this.server?.address();
    return typeof address === "object" && address ? address.port : this.options.port;
  }

  /** Starts listening, then points every bot's webhook at this server. */
  async start(): Promise<void> {
    const server = createServer((req, res) => void this.route(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.options.port, this.options.host, () => resolve());
    });
    this.server = server;
    for (const { botId, bot } of this.bots) {
      await bot.api.setWebhook(this.webhookUrl(botId), {
        secret_token: this.options.secretToken,
        allowed_updates: [...ALLOWED_UPDATES],
      });
    }
    this.log.info({ port: this.port, bots: this.bots.length }, "telegram: webhook server started");
  }

  /** Stops accepting updates; the webhooks stay set so Telegram keeps them until the next start. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private webhookUrl(botId: number): string {
    return `${this.options.url.replace(/\/+$/, "")}/${botId}`;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The request target as sent, query aside: no normalisation that could let another path in.
    const path = (req.url ?? "").split("?")[0]!;
    const handler = this.handlers.get(path);
    const botId = path.slice(path.lastIndexOf("/") + 1);
    if (req.method !== "POST" || !handler) {
      res.writeHead(404).end();
      return;
    }
    try {
      await handler(req, res);
    } catch (err) {
      this.log.error(
        { err: loggableError(err), botId },
        "telegram: a webhook update was not taken; Telegram will retry",
      );
      if (!res.headersSent) res.writeHead(500).end();
    }
  }
}
