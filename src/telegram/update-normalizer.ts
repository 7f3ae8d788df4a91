import type { Message, Update } from "grammy/types";
import type { InboundEvent, InboundFile } from "../core/event.js";
import { cleanText, type BotName } from "./bot-mentions.js";
import type { BotIdentity, TelegramEdge } from "./edge-record.js";
import { OTHER_MEDIA, refusedMedia, takenMedia } from "./media-files.js";
import { messageRef } from "./telegram-origin.js";

/** limits.maxFileBytes' default, for an identity built without the configuration. */
const DEFAULT_MAX_FILE_BYTES = 1_000_000;

/** Reads a document into an inbound file (downloaded text, or the reason it was refused). */
export type ReadDocument = (doc: NonNullable<Message["document"]>) => Promise<InboundFile>;

/**
 * Turns one update, whose edge record `seen` was decided by `edgeOf`, into an inbound
 * event, or null when there is nothing to take (no text, only the bot's name). A
 * document is read here; nothing at the edge is decided again.
 */
export async function normalizeUpdate(
  update: Update,
  seen: TelegramEdge,
  bot: BotIdentity,
  readDocument: ReadDocument,
  now: () => number = Date.now,
): Promise<InboundEvent | null> {
  const { binding } = seen;
  // Only a room bound to a namespace becomes an event; the edge answers the others itself.
  if (binding.kind !== "agent") return null;
  const common = {
    eventId: `tg:${bot.id}:${update.update_id}`,
    namespace: binding.namespace,
    platform: "telegram" as const,
    receivedAt: now(),
    ...seen.edge,
  };
  const press = update.callback_query;
  if (press) {
    if (press.data === undefined) return null;
    return { ...common, kind: "choice", token: press.data };
  }
  const msg = update.message;
  if (!msg) return null;
  const placed = { ...common, ...replyTarget(msg, bot) };
  const caption = captionOf(msg, bot);
  if (msg.document) {
    return { ...placed, kind: "file", file: { ...(await readDocument(msg.document)), ...caption } };
  }
  const taken = takenMedia(msg, bot.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES);
  if (taken) return { ...placed, kind: "file", file: { ...taken, ...caption } };
  const media = OTHER_MEDIA.find(([field]) => msg[field] !== undefined);
  if (media) return { ...placed, kind: "file", file: refusedMedia(msg, media[0], media[1]) };
  if (msg.text === undefined) return null;
  const text = cleanText(msg.text, msg.entities ?? [], bot);
  if (text.trim() === "") return null;
  return { ...placed, kind: "message", text };
}

/** The bot message a message replies to, as a message ref, so a reply chooses from that offer. */
function replyTarget(msg: Message, bot: BotName): { replyTo?: string } {
  const replied = msg.reply_to_message;
  if (!replied || replied.from?.id !== bot.id || replied.forum_topic_created !== undefined) return {};
  return { replyTo: messageRef(msg.chat.id, replied.message_id) };
}

/** The text sent with a file, the bot's name removed as from a message: the question that goes with it. */
function captionOf(msg: Message, bot: BotName): { caption?: string } {
  if (msg.caption === undefined) return {};
  const caption = cleanText(msg.caption, msg.caption_entities ?? [], bot).trim();
  return caption === "" ? {} : { caption };
}
