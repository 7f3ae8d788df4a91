import type { ServerResponse } from "node:http";
import type { BotState } from "./telegram-standin-state.js";
import { conflict, type Json } from "./telegram-standin-wire.js";

/**
 * How updates reach a bot of the Bot API stand-in: getUpdates long polling (offsets,
 * allowed_updates, 409 beside another poller or a webhook) and webhook delivery with retries.
 */

/** Answers getUpdates now, or holds it open until updates arrive or its timeout ends. */
export function getUpdates(
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

/** Ends a held long poll so that it returns the updates now queued. */
export function wakePoll(state: BotState): void {
  // Deferred, so that updates pushed together arrive in one batch, as Telegram batches them.
  setImmediate(() => state.poll?.answer(200, { ok: true }));
}

/** POSTs an update to the bot's webhook after those before it, retrying until the receiver takes it. */
export function deliverByWebhook(
  state: BotState,
  update: Json,
  deliveries: { botId: number; updateId: number; status: number }[],
): void {
  const webhook = state.webhook!;
  state.webhookChain = state.webhookChain.then(async () => {
    for (let attempt = 1; attempt <= 20; attempt++) {
      let status = 0;
      let statusText = "";
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
        statusText = res.statusText;
        await res.arrayBuffer();
      } catch {
        status = 0;
      }
      deliveries.push({ botId: state.bot.id, updateId: update.update_id as number, status });
      if (status >= 200 && status < 300) {
        state.updates = state.updates.filter((u) => u !== update);
        return;
      }
      // Telegram keeps the last failure for getWebhookInfo, in its own wording.
      webhook.lastError = {
        date: Math.floor(Date.now() / 1000),
        message:
          status === 0 ? "Connection refused" : `Wrong response from the webhook: ${status} ${statusText}`,
      };
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  });
}
