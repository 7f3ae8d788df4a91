import type { Api } from "grammy";
import { telegramSectionIssues } from "../core/config-checks.js";
import { issueLine } from "../core/config-issues.js";
import { ConfigError } from "../core/errors.js";
import { registerSecret } from "../core/log.js";
import type { PlatformFactory, PlatformModule, RuntimeDeps } from "../runtime.js";
import type { PollingOptions } from "./polling-receiver.js";
import type { SenderTiming } from "./telegram-sender.js";
import { botIdFromToken, createTelegramBot } from "./telegram-bot.js";
import { TelegramReceiver, type ReceivingBot } from "./telegram-receiver.js";
import { TelegramSender } from "./telegram-sender.js";
import { telegramVoiceOf } from "./room-binding.js";
import { telegramRecheck } from "../access/recheck.js";

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
    // The config check's own rules, for a config that did not come from a file (tests, embedding).
    const { errors } = telegramSectionIssues(telegram);
    if (errors.length > 0) throw new ConfigError(errors.map(issueLine).join("\n"), { issues: errors });
    registerSecret(telegram.webhook?.secretToken);
    const bots: ReceivingBot[] = telegram.bots.map((config) => ({
      botId: botIdFromToken(config.token),
      bot: createTelegramBot(config.token, telegram.apiRoot),
      config,
    }));
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
        telegram.apiRoot,
      ),
      receiver: new TelegramReceiver(bots, deps, tuning.polling),
      senderCheck: telegramRecheck(telegram, (binding, sender) => deps.paired.has(binding, sender)),
      voiceOf: telegramVoiceOf(telegram, deps.config.namespaces),
    };
  };
}

/** The Telegram platform with default settings, as `roomgate start` runs it. */
export const telegramPlatform: PlatformFactory = createTelegramPlatform();
