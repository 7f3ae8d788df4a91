import { AsyncLocalStorage } from "node:async_hooks";
import { GrammyError, HttpError, type Api, type Transformer } from "grammy";
import type { SendGate, SendWindow } from "../core/adapter.js";
import {
  LeaseLostError,
  PermanentSendError,
  SendDeferredError,
  TransientSendError,
} from "../core/delivery-errors.js";
import { TelegramLimitsSchema, type TelegramLimits } from "../core/config/telegram.js";
import type { Logger } from "../core/log.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import { rateLimitedTotal } from "../ops/metrics.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";
import { loggableError, safeCause } from "./loggable-error.js";

/** The defaults (Telegram's documented limits for bots), as the config section writes them. */
export const DEFAULT_TELEGRAM_LIMITS: TelegramLimits = TelegramLimitsSchema.parse({});

/** Methods that post or change a message: the ones Telegram's flood limits count. */
const LIMITED = /^(send(?!ChatAction)|edit|copy|forward)/;

/**
 * Added to the windows. A slot counts from when its request may leave until the
 * request is answered, then from the answer (src/scheduler/rate-limiter.ts), so a
 * slow worker cannot squeeze requests closer than the limit; what is left uncovered
 * is a request still unanswered a whole window after it left, and the clocks' ms
 * rounding. The bot's window is what a backlog is paced by (30 a (1 s + slack)), so
 * its slack is small; one chat's sends are few, so its windows get more room.
 */
const SLACK_MS = 10;
const CHAT_SLACK_MS = 150;

/**
 * A send outside a turn (no gate: the edge's notices) retries 429s and 5xx here, up
 * to 8 attempts in all, waits doubling from 0.5 s to at most 30 s (a 429 waits what
 * Telegram asked, through the limiter's hold). A network failure (no answer at all)
 * gets only the first 4 of them, so that an unreachable API ends in a clear error
 * within seconds. Inside a turn nothing retries here: the scheduler parks the room.
 */
const UNGATED_RETRY: RetryPolicy = { attempts: 8, firstMs: 500, maxMs: 30_000 };
const UNGATED_NETWORK_ATTEMPTS = 4;

/**
 * Network failures that happen before a connection exists (refused, no route, no such
 * host): the request was never written, so the message cannot have arrived. A reset or
 * a timeout may come after Telegram took it, and stays unknown.
 */
const NOT_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** True when `err` (grammY's HttpError around node-fetch's, or a raw one) says no connection was made. */
export function neverConnected(err: unknown): boolean {
  const inner: unknown = err instanceof HttpError ? err.error : err;
  const code = (inner as { code?: unknown } | null)?.code;
  return typeof code === "string" && NOT_CONNECTED.has(code);
}

/** The turn a send belongs to, so every attempt is reserved through that turn's gate. */
interface SendScope {
  gate: SendGate;
  part: string;
}

const scope = new AsyncLocalStorage<SendScope>();

/** True for the Bot API methods the limits apply to; grammY's auto-retry must leave these alone. */
export function isLimitedMethod(method: string): boolean {
  return LIMITED.test(method);
}

/** Runs `send` so that each of its Bot API attempts is reserved through `gate` as part `part`. */
export function inSendScope<T>(gate: SendGate | undefined, part: string, send: () => Promise<T>): Promise<T> {
  return gate ? scope.run({ gate, part }, send) : send();
}

/** A bot's send windows' group: the hash tag of all its windows' keys, one Cluster slot. */
export function telegramGroup(botId: number): string {
  return `tg:${botId}`;
}

/** The windows a send to `chatId` must fit: per bot, per chat, and per group (negative ids are groups). */
export function telegramWindows(botId: number, chatId: number, limits: TelegramLimits): SendWindow[] {
  const group = telegramGroup(botId);
  const perSecond = (n: number, slack: number): Pick<SendWindow, "max" | "windowMs"> =>
    n >= 1
      ? { max: Math.floor(n), windowMs: 1000 + slack }
      : { max: 1, windowMs: Math.ceil(1000 / n) + slack };
  const windows: SendWindow[] = [
    { group, scope: "bot", ...perSecond(limits.botPerSecond, SLACK_MS) },
    { group, scope: `chat:${chatId}`, ...perSecond(limits.chatPerSecond, CHAT_SLACK_MS) },
  ];
  if (chatId < 0) {
    const perMinute = limits.groupPerMinute;
    windows.push({
      group,
      scope: `group:${chatId}`,
      ...(perMinute >= 1
        ? { max: Math.floor(perMinute), windowMs: 60_000 + CHAT_SLACK_MS }
        : { max: 1, windowMs: Math.ceil(60_000 / perMinute) + CHAT_SLACK_MS }),
    });
  }
  return windows;
}

/**
 * Installs the limits on a bot's API as its outermost transformer, so that every
 * HTTP attempt of a limited method — retries included — first takes a slot in
 * Redis (per bot, chat and group, on Redis' clock). Inside a turn the attempt goes
 * through the turn's gate: a wait longer than a moment or a 429 ends the attempt
 * with SendDeferredError, and the worker parks the room instead of sleeping.
 * Outside a turn it waits and retries here. Every 429 is logged and counted.
 */
export function installSendLimits(
  api: Api,
  options: { botId: number; limiter: RedisRateLimiter; limits: TelegramLimits; log: Logger },
): void {
  const transformer: Transformer = async (prev, method, payload, signal) => {
    if (!isLimitedMethod(method)) return prev(method, payload, signal);
    const chatId = Number((payload as { chat_id?: unknown }).chat_id);
    const all = telegramWindows(options.botId, chatId, options.limits);
    // A draft is no message: it counts towards the bot's rate, not the chat's, so the answer after it is not held up.
    const windows = method === "sendMessageDraft" ? all.slice(0, 1) : all;
    const on429 = async (retryAfter: number): Promise<void> => {
      options.log.warn(
        { chatId, method, retryAfter, botId: options.botId },
        "telegram: 429 too many requests; holding the chat's sends",
      );
      rateLimitedTotal.inc({ platform: "telegram", method });
      await options.limiter.hold(all.slice(1), retryAfter * 1000);
    };
    const turn = scope.getStore();
    if (turn) {
      // One attempt: the scheduler parks the room for any wait or retry.
      await turn.gate.reserve(windows, turn.part);
      let res: Awaited<ReturnType<typeof prev>>;
      try {
        res = await prev(method, payload, signal);
      } catch (err) {
        if (neverConnected(err)) turn.gate.refused();
        throw new TransientSendError(`${method}: ${loggableError(err).message}`, { cause: safeCause(err) });
      } finally {
        turn.gate.answered();
      }
      // Telegram answered, refusing: nothing was sent. A 5xx may come from a proxy in front
      // of a Bot API that took the message, so it stays an attempt of unknown outcome.
      if (!res.ok && res.error_code < 500) turn.gate.refused();
      if (!res.ok && res.error_code === 429) {
        const retryAfter = retryAfterOf(res);
        await on429(retryAfter);
        throw new SendDeferredError(retryAfter * 1000, `429 from ${method}`);
      }
      return res;
    }
    try {
      return await retry(
        async () => {
          const slot = await options.limiter.acquire(windows, signal as AbortSignal | undefined);
          const res = await prev(method, payload, signal).finally(() => {
            if (slot.tight)
              void options.limiter
                .answered(windows, slot.member)
                .catch((err: unknown) =>
                  options.log.debug(
                    { err: loggableError(err).message },
                    "telegram: send's answer time not recorded",
                  ),
                );
          });
          if (res.ok) return res;
          if (res.error_code === 429) {
            await on429(retryAfterOf(res));
            throw new RefusedAttempt(res, true);
          }
          if (res.error_code >= 500) throw new RefusedAttempt(res, false);
          return res;
        },
        (err, attempt) => {
          if (signal?.aborted) return "fail";
          // The 429's hold makes the next slot wait as long as Telegram asked; nothing more to sleep.
          if (err instanceof RefusedAttempt) return err.rateLimited ? { afterMs: 0 } : "retry";
          return err instanceof HttpError && attempt < UNGATED_NETWORK_ATTEMPTS ? "retry" : "fail";
        },
        UNGATED_RETRY,
      );
    } catch (err) {
      // Out of attempts on a refusal: grammY turns Telegram's answer into its GrammyError.
      if (err instanceof RefusedAttempt) return err.res;
      throw err;
    }
  };
  api.config.use(transformer);
}

/** A send Telegram refused in a way a later attempt may not be (429, 5xx), carried to the retry. */
class RefusedAttempt extends Error {
  constructor(
    readonly res: ApiResponse,
    readonly rateLimited: boolean,
  ) {
    super("telegram refused the attempt");
  }
}

type ApiResponse = Awaited<ReturnType<Parameters<Transformer>[0]>>;

/** The seconds a 429 asks to wait (at least one). */
function retryAfterOf(res: ApiResponse): number {
  return res.ok ? 1 : Math.max(1, Number(res.parameters?.retry_after ?? 1));
}

/**
 * What the scheduler should do with a failed send: waits, lost leases and
 * transient failures as they are; Telegram's 5xx and exhausted 429s are retried
 * later; any other refusal (blocked by the user, chat gone) cannot be fixed by a retry.
 */
export function classifySendError(method: string, err: unknown): Error {
  if (
    err instanceof SendDeferredError ||
    err instanceof LeaseLostError ||
    err instanceof TransientSendError ||
    err instanceof PermanentSendError
  ) {
    return err;
  }
  const text = `${method} failed: ${loggableError(err).message}`;
  if (err instanceof GrammyError && err.error_code >= 400 && err.error_code < 500 && err.error_code !== 429) {
    return new PermanentSendError(text, { cause: err });
  }
  return new TransientSendError(text, { cause: safeCause(err) });
}
