import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { webhookCallback, type Bot } from "grammy";
import type { Update } from "grammy/types";
import type { Receiver } from "../core/adapter.js";
import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { ALLOWED_UPDATES } from "./polling-receiver.js";
import { loggableError } from "./loggable-error.js";
import type { NoticeLimits } from "./outage-notices.js";
import { UpdateLanes, type LaneOptions, type LaneStore } from "./update-lanes.js";

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

/** How the webhook queues updates: the poller's tuning, the send windows without a bot id. */
export interface WebhookLaneOptions extends Partial<Omit<LaneOptions, "noticeLimits">> {
  /** The send windows, where the notices count. */
  noticeLimits?: Omit<NoticeLimits, "botId">;
}

/**
 * How long a delivery waits for its update to be queued or set aside before it is
 * answered 500 (Telegram posts it again, and that delivery joins the same update in its
 * lane): longer than a chat takes to be set aside (1 s, chat-lanes.ts) plus a replica
 * wait, shorter than grammY's own 10 s timeout.
 */
const ANSWER_WITHIN_MS = 3000;

/**
 * Webhook mode: one HTTP server for all bots, each at exactly `<path>/<bot id>`,
 * each request checked against the secret token by grammY's webhookCallback (in
 * constant time, before the body is read). Anything else is a 404. Updates go through
 * the poller's per-chat lanes (update-lanes.ts): a delivery is answered 200 once its
 * update is queued or durably set aside, so a chat whose room's Cluster slot range is
 * down holds only its own later updates, not every chat's behind it. An update neither
 * queued nor set aside in time answers 500, so that Telegram delivers it again; while
 * it waits, its person is told once (outage-notices.ts).
 */
export class WebhookReceiver implements Receiver {
  private server: Server | undefined;
  private readonly handlers = new Map<string, (req: IncomingMessage, res: ServerResponse) => Promise<void>>();
  private readonly lanes: UpdateLanes[] = [];
  private stopping = new AbortController();

  constructor(
    private readonly bots: WebhookBot[],
    private readonly options: WebhookOptions,
    private readonly log: Logger,
    store: LaneStore,
    tuning: WebhookLaneOptions = {},
  ) {
    for (const { botId, bot, receive } of bots) {
      const laneOptions: LaneOptions = {
        backoffMs: tuning.backoffMs ?? { initial: 1000, max: 30_000 },
        notices: tuning.notices,
        noticeLimits: tuning.noticeLimits && { ...tuning.noticeLimits, botId },
      };
      const lanes = new UpdateLanes(
        bot.api,
        botId,
        store,
        receive,
        log,
        laneOptions,
        () => this.stopping.signal,
      );
      this.lanes.push(lanes);
      // No bot.catch: an error must reach webhookCallback's caller to become a 500.
      bot.use(async (ctx) => {
        const [taken] = lanes.pushAll([ctx.update]);
        await answerWithin(taken!, ANSWER_WITHIN_MS, () => {
          throw new UpdateNotTakenError(ctx.update.update_id, lanes.refusal(ctx.update.update_id));
        });
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

  /**
   * Puts the updates set aside before a restart in their lanes, starts listening, then
   * points every bot's webhook at this server.
   */
  async start(): Promise<void> {
    this.stopping = new AbortController();
    for (const lanes of this.lanes) await lanes.resume();
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
    // Updates in hand are given up: unconfirmed, Telegram posts them again; set aside, they stay kept.
    this.stopping.abort();
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

/** Waits for `taken`, or runs `late` (which throws) once `ms` have passed without it. */
async function answerWithin(taken: Promise<void>, ms: number, late: () => never): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  try {
    if ((await Promise.race([taken, timedOut])) === "late") late();
  } finally {
    clearTimeout(timer);
  }
}

/** A delivery whose update was neither queued nor set aside in time: answered 500, to come again. */
export class UpdateNotTakenError extends RoomgateError {
  constructor(
    readonly updateId: number,
    /** What Redis last said, if it refused. */
    readonly refusal: string | undefined,
  ) {
    super(
      `update ${updateId} was not queued or set aside within ${ANSWER_WITHIN_MS} ms` +
        (refusal ? `: ${refusal}` : ""),
    );
  }
}
