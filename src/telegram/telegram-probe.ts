import { Api, GrammyError, HttpError } from "grammy";
import type { TelegramConfig } from "../core/config.js";
import { networkReason, note, ok, problem, type Diagnosis } from "../core/diagnosis.js";
import { printable } from "../core/printable.js";
import { botIdPart } from "../core/telegram-token.js";

/** How long one Bot API call of the doctor may take. */
const PROBE_TIMEOUT_SECONDS = 10;

type Bot = TelegramConfig["bots"][number];

function failure(err: unknown, subject: string, host: string): Diagnosis {
  if (err instanceof GrammyError && (err.error_code === 401 || err.error_code === 404)) {
    return problem(
      `${subject}: Telegram refused the token (${err.error_code} ${err.description})`,
      "copy the token from @BotFather (/mybots → API Token) into the variable the configuration names",
    );
  }
  if (err instanceof GrammyError) {
    return problem(
      `${subject}: the Bot API answered ${err.error_code} ${err.description}`,
      "try again later",
    );
  }
  const reason = networkReason(err instanceof HttpError ? err.error : err, host) ?? (err as Error).message;
  return problem(
    `${subject}: the Bot API at ${host} is not reachable: ${reason}`,
    "check this machine's network and DNS, or telegram.apiRoot",
  );
}

/** One bot: its token (getMe), its topic mode, and the webhook Telegram holds for it (getWebhookInfo). */
async function probeBot(bot: Bot, telegram: TelegramConfig, index: number): Promise<Diagnosis[]> {
  const root = telegram.apiRoot ?? "https://api.telegram.org";
  const host = new URL(root).host;
  const subject = `telegram bot ${botIdPart(bot.token) ?? `#${index + 1}`} (telegram.bots[${index}])`;
  const api = new Api(bot.token, { apiRoot: root, timeoutSeconds: PROBE_TIMEOUT_SECONDS });
  let me;
  try {
    me = await api.getMe();
  } catch (err) {
    return [failure(err, subject, host)];
  }
  const named = `telegram bot @${printable(me.username)} (telegram.bots[${index}])`;
  const found: Diagnosis[] = [ok(`${named}: the token is accepted`)];
  if (bot.topics.length > 0 && !me.has_topics_enabled) {
    found.push(
      problem(
        `${named}: topics are configured but the bot's topic mode is off, so its private chat has none`,
        "in @BotFather open the bot's settings and turn on threaded mode (topics in private chats)",
      ),
    );
  }
  try {
    const hook = await api.getWebhookInfo();
    if (telegram.mode === "polling") {
      if (hook.url)
        found.push(
          note(`${named}: a webhook is set (${printable(hook.url)}); start in polling mode removes it`),
        );
    } else if (hook.last_error_message) {
      found.push(
        problem(
          `${named}: Telegram's last delivery to the webhook failed: ${printable(hook.last_error_message)}`,
          "check that telegram.webhook.url reaches this host (the TLS proxy in front of telegram.webhook.port)",
        ),
      );
    } else {
      const waiting = hook.pending_update_count > 0 ? `, ${hook.pending_update_count} updates waiting` : "";
      found.push(
        ok(`${named}: webhook ${hook.url ? printable(hook.url) : "not set yet (start sets it)"}${waiting}`),
      );
    }
  } catch (err) {
    found.push(failure(err, named, host));
  }
  return found;
}

/**
 * What `roomgate doctor` finds about the Telegram section: for every bot, whether
 * Telegram accepts its token, whether its topic mode matches its `topics`, and the
 * state of its webhook.
 */
export async function probeTelegram(telegram: TelegramConfig): Promise<Diagnosis[]> {
  const each = await Promise.all(telegram.bots.map((bot, i) => probeBot(bot, telegram, i)));
  return each.flat();
}
