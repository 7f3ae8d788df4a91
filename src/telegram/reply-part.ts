import { GrammyError, type Api } from "grammy";
import type { EphemeralMessageParameters, Message } from "grammy/types";
import type { DeliveryContext } from "../core/adapter.js";
import type { TelegramOrigin } from "../core/origin.js";
import { htmlToPlainText } from "../render/html.js";
import { withResendNote, type TelegramMessage } from "../render/telegram.js";
import { resentNotedPartsTotal } from "../ops/metrics.js";
import { messageRef } from "./telegram-origin.js";
import { classifySendError, inSendScope } from "./send-limits.js";

/** How one part of a reply is sent: which part, under which ledger key, and to whom alone. */
export interface PartOptions {
  /** The first part answers the person's message (reply_parameters). */
  first: boolean;
  /** The part's ledger key (the send slot's scope, and its `:plain` fallback's). */
  key: string;
  context: DeliveryContext;
  /** Sent as an ephemeral message: one member sees it (Bot API 10). */
  ephemeral?: EphemeralMessageParameters;
}

/**
 * Sends one rendered part of a reply into the origin's chat and topic (its buttons, as
 * an answer to the person's message when it is the first), falling back to plain text
 * when Telegram cannot parse its markup. A part whose earlier attempt may have arrived
 * (its worker died with the request out) carries a note that it may be a repeat
 * (withResendNote), counted. Errors are classified for the delivery's retries.
 */
export async function sendPart(
  api: Api,
  origin: TelegramOrigin,
  part: TelegramMessage,
  options: PartOptions,
): Promise<Message.TextMessage> {
  if (options.context.ledger.unconfirmed?.(options.key) !== true) return sendOne(api, origin, part, options);
  const noted = withResendNote(part);
  const shown = noted.at(-1)!;
  for (const note of noted.slice(0, -1)) {
    // Alone before a part too long to carry it: sent once per turn, never itself noted.
    const key = `${options.key}:resent`;
    const { context } = options;
    if ((await context.ledger.get(key)) !== null) continue;
    const sent = await sendOne(api, origin, note, { ...options, first: false, key });
    await context.ledger.set(key, messageRef(sent.chat.id, sent.message_id));
  }
  const message = await sendOne(api, origin, shown, options);
  resentNotedPartsTotal.inc({ platform: "telegram" });
  return message;
}

async function sendOne(
  api: Api,
  origin: TelegramOrigin,
  part: TelegramMessage,
  options: PartOptions,
): Promise<Message.TextMessage> {
  const { first, key, context, ephemeral } = options;
  const other = {
    link_preview_options: { is_disabled: true },
    ...(origin.topicId === undefined ? {} : { message_thread_id: origin.topicId }),
    ...(ephemeral ? { ephemeral_message_parameters: ephemeral } : {}),
    ...(first && origin.messageId !== undefined
      ? { reply_parameters: { message_id: origin.messageId, allow_sending_without_reply: true } }
      : {}),
    ...(part.keyboard
      ? {
          reply_markup: {
            inline_keyboard: part.keyboard.map((row) =>
              row.map(({ text, data }) => ({ text, callback_data: data })),
            ),
          },
        }
      : {}),
  };
  // Recorded with the turn, so that a retried turn (the plain attempt may have to wait
  // for its slot) goes on with plain text instead of trying the refused markup again.
  const plainKey = `${key}:plain`;
  if ((await context.ledger.get(plainKey)) === null) {
    try {
      return await inSendScope(context.gate, key, () =>
        api.sendMessage(origin.chatId, part.html, { ...other, parse_mode: "HTML" }),
      );
    } catch (err) {
      if (!(err instanceof GrammyError && err.description.includes("can't parse entities"))) {
        throw classifySendError("sendMessage", err);
      }
      context.log.warn(
        { err: err.description, chatId: origin.chatId },
        "telegram: markup refused; sending as plain text",
      );
      await context.ledger.set(plainKey, "markup refused");
    }
  }
  try {
    return await inSendScope(context.gate, key, () =>
      api.sendMessage(origin.chatId, htmlToPlainText(part.html), other),
    );
  } catch (err) {
    throw classifySendError("sendMessage", err);
  }
}
