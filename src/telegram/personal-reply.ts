import type { Api } from "grammy";
import type { DeliveryContext } from "../core/adapter.js";
import { PermanentSendError } from "../core/delivery-errors.js";
import type { InboundEvent } from "../core/event.js";
import type { TelegramOrigin } from "../core/origin.js";
import type { Reply } from "../core/reply.js";
import type { TelegramMessage } from "../render/telegram.js";
import { loggableError } from "./loggable-error.js";
import { sendPart } from "./reply-part.js";
import { classifySendError, inSendScope } from "./send-limits.js";
import { ephemeralRef } from "./telegram-origin.js";

/**
 * How long after a press Telegram takes an ephemeral reply to it (`callback_query_id`,
 * 15 s), less a margin for the request on its way.
 */
const REPLY_TO_PRESS_MS = 13_000;

/** What the ledger keeps when Telegram refused the member's message: the room gets the reply instead. */
const REFUSED = "refused";

/**
 * A reply asked of one member (`Reply.personal`) in a group or forum topic: its parts
 * go as ephemeral messages that only they see (the first in reply to their press when
 * the turn is one, within Telegram's window), then the room's note. Undefined when it
 * does not apply (a direct chat, files to send, a sender id that is not Telegram's) or
 * Telegram refused the first part (the member is not in the chat, the chat takes none):
 * the caller then sends the reply to the room, as before. Each part is sent once per
 * turn (the ledger), like the room's.
 */
export async function deliverPersonally(
  api: Api,
  event: InboundEvent,
  origin: TelegramOrigin,
  reply: Reply,
  parts: TelegramMessage[],
  context: DeliveryContext,
): Promise<string[] | undefined> {
  const personal = reply.personal;
  const receiver = personal ? /^tg:(\d+)$/.exec(personal.to.id)?.[1] : undefined;
  const group = origin.chatType === "group" || origin.chatType === "supergroup";
  if (!personal || receiver === undefined || !group || (reply.attachments?.length ?? 0) > 0) return undefined;
  if ((await context.ledger.get("alone")) === REFUSED) return undefined;
  const receiverId = Number(receiver);
  const press =
    event.kind === "choice" &&
    origin.callbackQueryId !== undefined &&
    origin.userId === receiverId &&
    Date.now() - event.receivedAt < REPLY_TO_PRESS_MS
      ? origin.callbackQueryId
      : undefined;
  const refs: string[] = [];
  for (const [i, part] of parts.entries()) {
    const key = `alone:${i}`;
    const done = await context.ledger.get(key);
    if (done !== null) {
      refs.push(done);
      continue;
    }
    const ephemeral = {
      receiver_user_id: receiverId,
      ...(i === 0 && press !== undefined ? { callback_query_id: press } : {}),
    };
    let sent;
    try {
      sent = await sendPart(api, origin, part, { first: i === 0, key, context, ephemeral });
    } catch (err) {
      if (i > 0 || !(err instanceof PermanentSendError)) throw err;
      context.log.info(
        { err: loggableError(err.cause ?? err), chatId: origin.chatId },
        "telegram: a message for one member was refused; the room gets it instead",
      );
      await context.ledger.set("alone", REFUSED);
      return undefined;
    }
    const ref = ephemeralRef(origin.chatId, receiverId, sent.ephemeral_message_id ?? 0);
    await context.ledger.set(key, ref);
    refs.push(ref);
  }
  if (personal.note !== undefined && (await context.ledger.get("note")) === null) {
    const where = origin.topicId === undefined ? {} : { message_thread_id: origin.topicId };
    try {
      await inSendScope(context.gate, "note", () => api.sendMessage(origin.chatId, personal.note!, where));
    } catch (err) {
      throw classifySendError("sendMessage", err);
    }
    await context.ledger.set("note", "sent");
  }
  return refs;
}
