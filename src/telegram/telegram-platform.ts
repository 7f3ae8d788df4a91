import type { Api } from "grammy";
import { ConfigError } from "../core/errors.js";
import { registerSecret } from "../core/log.js";
import type { PlatformFactory, PlatformModule, RuntimeDeps } from "../runtime.js";
import type { PollingOptions } from "./polling-receiver.js";
import type { SenderTiming } from "./telegram-sender.js";
import { botIdFromToken, createTelegramBot } from "./telegram-bot.js";
import { TelegramReceiver, type ReceivingBot } from "./telegram-receiver.js";
import { TelegramSender } from "./telegram-sender.js";
import { telegramSenderCheck } from "./sender-check.js";

/**
 * Builds the Telegram platform for every configured bot (one grammY bot per token):
 * a sender that picks the bot by the event's origin, and a receiver for all bots.
 * `tuning` shortens long polling and the sender's timers (tests use it).
 */
export function createTelegramPlatform(
  tuning: { polling?: Partial<PollingOptions>; sender?: Partial<SenderTiming> } = {},
): PlatformFactory {
  return (deps: RuntimeDeps): PlatformModule => {
    const telegram = deps.config.telegram;
    if (!telegram || telegram.bots.length === 0) return {};
    if (telegram.mode === "webhook" && !telegram.webhook) {
      throw new ConfigError("telegram.webhook: required when telegram.mode is webhook");
    }
    registerSecret(telegram.webhook?.secretToken);
    const bots: ReceivingBot[] = [];
    for (const [i, config] of telegram.bots.entries()) {
      let botId: number;
      try {
        botId = botIdFromToken(config.token);
      } catch (err) {
        throw new ConfigError(`telegram.bots.${i}.token: ${(err as Error).message}`, { cause: err });
      }
      if (bots.some((b) => b.botId === botId)) {
        throw new ConfigError(`telegram.bots.${i}: bot ${botId} is configured twice`);
      }
      bots.push({ botId, bot: createTelegramBot(config.token, telegram.apiRoot), config });
    }
    const apis = new Map<number, Api>(bots.map(({ botId, bot }) => [botId, bot.api]));
    return {
      sender: new TelegramSender(
        apis,
        deps.keys,
        deps.limiter,
        deps.log,
        tuning.sender,
        telegram.limits,
        deps.redis,
      ),
      receiver: new TelegramReceiver(bots, deps, tuning.polling),
      senderCheck: telegramSenderCheck(telegram, (binding, sender) => deps.paired.has(binding, sender)),
    };
  };
}

/** The Telegram platform with default settings, as `roomgate start` runs it. */
export const telegramPlatform: PlatformFactory = createTelegramPlatform();
