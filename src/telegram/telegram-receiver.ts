import type { Bot } from "grammy";
import type { Receiver } from "../core/adapter.js";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/log.js";
import type { RuntimeDeps } from "../runtime.js";
import { registerCommands } from "./command-registry.js";
import { FloodGate } from "../scheduler/flood-gate.js";
import { ChatMigrations } from "./chat-migrations.js";
import { DocumentReader } from "./document-reader.js";
import { loggableError, safeCause } from "./loggable-error.js";
import { PollingReceiver, type PollingOptions } from "./polling-receiver.js";
import type { TelegramBotConfig } from "../access/telegram.js";
import { TelegramStartError } from "./telegram-errors.js";
import { PrivateTopics } from "./private-topics.js";
import { TopicLobby } from "./topic-lobby.js";
import { UpdateIntake } from "./edge/update-intake.js";
import { healthStatus } from "../ops/health-status.js";
import { WebhookReceiver } from "./webhook-receiver.js";

/** One configured bot as the receiver runs it. */
export interface ReceivingBot {
  botId: number;
  bot: Bot;
  config: TelegramBotConfig;
}

/**
 * Starts every configured bot: checks its token with getMe (learning its username
 * for mentions), registers the command menu when it changed, then receives by long
 * polling or by webhook as configured.
 */
export class TelegramReceiver implements Receiver {
  readonly name = "telegram";
  private receivers: Receiver[] = [];
  private intakes: UpdateIntake[] = [];

  constructor(
    private readonly bots: ReceivingBot[],
    private readonly deps: RuntimeDeps,
    private readonly polling: Partial<PollingOptions> = {},
  ) {}

  /**
   * Starts all bots. A bot whose token is refused (or whose getMe fails) is reported
   * in the log and in /healthz, and the others run; only when no bot can start does
   * the start fail, with that clear error.
   */
  async start(): Promise<void> {
    const { config, redis, keys, log, scheduler } = this.deps;
    const telegram = config.telegram;
    if (!telegram) return;
    const intakes = [];
    let firstFailure: unknown;
    for (const { botId, bot, config: botConfig } of this.bots) {
      const component = `telegram bot ${botId} (${agentsOf(botConfig)})`;
      try {
        await this.init(bot, botId);
      } catch (err) {
        firstFailure ??= err;
        const reason = err instanceof TelegramStartError ? err.userText : String(err);
        log.error(
          { botId, namespace: botConfig.namespace, reason },
          "telegram: bot could not start; the others run",
        );
        healthStatus.degrade(component, reason);
        continue;
      }
      healthStatus.recover(component);
      await registerCommands(bot.api, botId, redis, keys, log);
      const migrations = new ChatMigrations(redis, keys, botId);
      await migrations.load();
      intakes.push({ botId, bot, intake: this.intake(bot, botConfig, config, log, migrations) });
      log.info(
        {
          botId,
          username: bot.botInfo.username,
          namespace: botConfig.namespace,
          topics: botConfig.topics.map((t) => t.name),
        },
        "telegram: bot ready",
      );
      if (botConfig.topics.length > 0 && bot.botInfo.has_topics_enabled !== true) {
        log.warn(
          { botId, username: bot.botInfo.username },
          "telegram: the bot lists topics but its topic mode is off (turn on threads for it in @BotFather); private chats have no topics",
        );
      }
    }
    if (intakes.length === 0 && firstFailure !== undefined) throw firstFailure;
    if (telegram.mode === "webhook" && telegram.webhook) {
      const bots = intakes.map(({ botId, bot, intake }) => ({
        botId,
        bot,
        receive: intake.receive.bind(intake),
      }));
      this.receivers = [
        new WebhookReceiver(
          bots,
          telegram.webhook,
          log,
          { redis, keys, durability: scheduler.durability },
          {
            backoffMs: this.polling.backoffMs,
            notices: this.polling.notices,
            noticeLimits: { limiter: this.deps.limiter, limits: telegram.limits },
          },
        ),
      ];
    } else {
      this.receivers = intakes.map(
        ({ botId, bot, intake }) =>
          new PollingReceiver(
            bot.api,
            botId,
            { redis, keys, durability: scheduler.durability },
            intake.receive.bind(intake),
            log,
            { ...this.polling, noticeLimits: { botId, limiter: this.deps.limiter, limits: telegram.limits } },
          ),
      );
    }
    for (const r of this.receivers) await r.start();
  }

  /** The bots that cannot take updates now, and why. */
  stuck(): string | undefined {
    const reasons = this.receivers.flatMap((r) => r.stuck?.() ?? []);
    return reasons.length > 0 ? reasons.join("; ") : undefined;
  }

  /** Stops receiving; updates in hand are enqueued or left unconfirmed to arrive again. */
  async stop(): Promise<void> {
    await Promise.all(this.receivers.map((r) => r.stop()));
    await Promise.all(this.intakes.map((i) => i.drain()));
    this.receivers = [];
    this.intakes = [];
  }

  /** getMe once, bounded by the client's retries: grammY's own `init` would retry a network failure forever. */
  private async init(bot: Bot, botId: number): Promise<void> {
    try {
      bot.botInfo = await bot.api.getMe();
    } catch (err) {
      const reason = loggableError(err).message;
      throw new TelegramStartError(`telegram bot ${botId}: getMe failed: ${reason}`, {
        cause: safeCause(err),
        userText: `Telegram bot ${botId} could not start (${reason}). Check its token and telegram.apiRoot.`,
      });
    }
  }

  private intake(
    bot: Bot,
    botConfig: TelegramBotConfig,
    config: Config,
    log: Logger,
    migrations: ChatMigrations,
  ): UpdateIntake {
    const apiRoot = (config.telegram?.apiRoot ?? "https://api.telegram.org").replace(/\/+$/, "");
    const reader = new DocumentReader(
      bot.api,
      `${apiRoot}/file/bot${bot.token}`,
      config.limits.maxFileBytes,
      log,
      config.limits.fileTimeoutSeconds * 1000,
    );
    const topics = new PrivateTopics(this.deps.redis, this.deps.keys, bot.botInfo.id);
    const identity = {
      id: bot.botInfo.id,
      username: bot.botInfo.username,
      config: botConfig,
      edits: config.edits,
      aliases: migrations,
      paired: (binding: string, sender: string) => this.deps.paired.has(binding, sender),
      topicsEnabled: bot.botInfo.has_topics_enabled === true,
      topics,
      maxFileBytes: config.limits.maxFileBytes,
    };
    const { inbox, redis, keys, scheduler, pairing } = this.deps;
    const flood = new FloodGate(scheduler, config.limits);
    const intake = new UpdateIntake(bot, identity, reader, {
      inbox,
      redis,
      keys,
      flood,
      log,
      migrations,
      pairing,
      lobby: new TopicLobby(bot.api, identity, topics, log),
    });
    this.intakes.push(intake);
    return intake;
  }
}

/** The agents a bot serves, for health and log lines: its namespace and its topics' namespaces. */
function agentsOf(config: TelegramBotConfig): string {
  const names = [config.namespace, ...config.topics.map((t) => t.namespace)].filter((n) => n !== undefined);
  return `namespace ${[...new Set(names)].join(", ")}`;
}
