import { autoRetry } from "@grammyjs/auto-retry";
import { Bot, HttpError, type Transformer } from "grammy";
import { registerSecret } from "../core/log.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import { botIdPart } from "../core/telegram-token.js";
import { isLimitedMethod } from "./send-limits.js";
import { TelegramTokenError } from "./telegram-errors.js";
import { countTelegramCalls } from "./telegram-metrics.js";

/** How long a rate-limited or failing call is retried before the error reaches the caller. */
const RETRY = { maxRetryAttempts: 8, maxDelaySeconds: 120 } as const;
/** Network failures (no answer at all) are retried this often, waits doubling from the first. */
const NETWORK_RETRY: RetryPolicy = { attempts: 4, firstMs: 500, maxMs: 4000 };

/**
 * The bot id is the part of the token before the colon; reading it there lets a
 * worker-only process address the right bot without calling getMe.
 */
export function botIdFromToken(token: string): number {
  const id = botIdPart(token);
  if (id === undefined) throw new TelegramTokenError("a Telegram bot token must look like <bot id>:<secret>");
  return id;
}

/**
 * Creates the grammY bot for one token, pointed at the configured Bot API root:
 * auto-retry waits out 429 `retry_after` and retries 5xx with backoff; network
 * failures are retried a bounded number of times, so that an unreachable API ends
 * in a clear error (a failed start) rather than an endless silent wait. Methods
 * that post or edit messages are left to the send limits (`installSendLimits`),
 * which reserve a slot for every attempt: a retry in here would bypass them.
 */
export function createTelegramBot(token: string, apiRoot?: string): Bot {
  registerSecret(token);
  const bot = new Bot(token, {
    client: apiRoot === undefined ? {} : { apiRoot: apiRoot.replace(/\/+$/, "") },
  });
  // Transformers installed later wrap earlier ones: auto-retry sees network errors only once these gave up,
  // and the counter, innermost, sees every single attempt.
  bot.api.config.use(countTelegramCalls());
  bot.api.config.use(retryNetworkErrors(NETWORK_RETRY));
  const retry = autoRetry({ ...RETRY, rethrowHttpErrors: true });
  bot.api.config.use((prev, method, payload, signal) =>
    isLimitedMethod(method) ? prev(method, payload, signal) : retry(prev, method, payload, signal),
  );
  return bot;
}

function retryNetworkErrors(policy: RetryPolicy): Transformer {
  return (prev, method, payload, signal) =>
    retry(
      () => prev(method, payload, signal),
      // The poller retries getUpdates itself, with logging and a stop signal; limited methods are the gate's.
      (err) =>
        err instanceof HttpError && method !== "getUpdates" && !isLimitedMethod(method) && !signal?.aborted
          ? "retry"
          : "fail",
      policy,
    );
}
