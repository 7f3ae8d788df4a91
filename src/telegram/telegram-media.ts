import { InputFile, type Api } from "grammy";
import { attachmentBytes, type Attachment } from "../core/attachment.js";
import type { DeliveryContext } from "../core/adapter.js";
import { classifySendError, inSendScope } from "./send-limits.js";
import type { TelegramOrigin } from "../core/origin.js";
import { messageRef } from "./telegram-origin.js";

/** The Bot API's upload limits: photos up to 10 MB, other files up to 50 MB. */
export const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
export const DOCUMENT_MAX_BYTES = 50 * 1024 * 1024;

/**
 * Sends a reply's attachments after its text: images as photos (sendPhoto), the rest
 * and images too large for a photo as documents (sendDocument), each once per turn
 * (the ledger); a file over the upload limit is named in a line instead.
 */
export async function sendAttachments(
  api: Api,
  origin: TelegramOrigin,
  attachments: Attachment[],
  context: DeliveryContext,
): Promise<string[]> {
  const refs: string[] = [];
  const where = origin.topicId === undefined ? {} : { message_thread_id: origin.topicId };
  for (const [i, a] of attachments.entries()) {
    const key = `attach:${i}`;
    const sent = await context.ledger.get(key);
    if (sent !== null) {
      refs.push(sent);
      continue;
    }
    const bytes = attachmentBytes(a);
    const method = a.kind === "image" && bytes.length <= PHOTO_MAX_BYTES ? "sendPhoto" : "sendDocument";
    let message: { chat: { id: number }; message_id: number };
    try {
      message = await inSendScope<{ chat: { id: number }; message_id: number }>(context.gate, key, () => {
        if (bytes.length > DOCUMENT_MAX_BYTES) {
          const mb = (bytes.length / 1024 / 1024).toFixed(1);
          return api.sendMessage(origin.chatId, `📎 ${a.name} (${mb} MB) is too large to send here.`, where);
        }
        const file = new InputFile(bytes, a.name);
        return method === "sendPhoto"
          ? api.sendPhoto(origin.chatId, file, where)
          : api.sendDocument(origin.chatId, file, where);
      });
    } catch (err) {
      throw classifySendError(method, err);
    }
    const ref = messageRef(message.chat.id, message.message_id);
    await context.ledger.set(key, ref);
    refs.push(ref);
  }
  return refs;
}
