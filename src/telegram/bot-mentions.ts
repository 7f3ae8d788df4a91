import type { Message, MessageEntity } from "grammy/types";
import type { Addressed } from "../core/event.js";

/** Who the bot is, as a message names it: its user id and its username without the `@`. */
export interface BotName {
  id: number;
  username: string;
}

/** How a group message addresses the bot: a reply to it, a mention of it, or a command (to it or to no bot). */
export function addressedInGroup(msg: Message, bot: BotName): Addressed | undefined {
  const text = msg.text ?? msg.caption ?? "";
  const entities = msg.entities ?? msg.caption_entities ?? [];
  const replied = msg.reply_to_message;
  // In forums every message "replies" to the topic's creation message; that is no reply to the bot.
  if (replied?.from?.id === bot.id && replied.forum_topic_created === undefined) return "reply";
  for (const e of entities) {
    if (e.type === "text_mention" && e.user.id === bot.id) return "mention";
    const part = slice(text, e);
    if (e.type === "mention" && sameName(part.slice(1), bot.username)) return "mention";
    if (e.type === "bot_command" && e.offset === 0) {
      const target = part.split("@")[1];
      if (target === undefined || sameName(target, bot.username)) return "command";
    }
  }
  return undefined;
}

/**
 * Removes the bot's own name: `/cmd@bot` becomes `/cmd`, a leading or inline `@bot` goes,
 * with the separator left at the start by a leading mention. Nothing else is changed: the
 * person's text reaches the namespace as they sent it.
 */
export function cleanText(text: string, entities: MessageEntity[], bot: BotName): string {
  let out = text;
  let leadingMention = false;
  // Right to left, so that earlier offsets stay valid (they are UTF-16, like JS strings).
  for (const e of [...entities].sort((a, b) => b.offset - a.offset)) {
    const part = slice(text, e);
    if (e.type === "bot_command" && e.offset === 0 && part.includes("@")) {
      out = part.split("@")[0] + out.slice(e.length);
    } else if (e.type === "mention" && sameName(part.slice(1), bot.username)) {
      out = out.slice(0, e.offset) + out.slice(e.offset + e.length).replace(/^ /, "");
      if (text.slice(0, e.offset).trim() === "") leadingMention = true;
    }
  }
  return leadingMention ? out.replace(/^[\s,:]+/, "") : out;
}

function slice(text: string, e: MessageEntity): string {
  return text.slice(e.offset, e.offset + e.length);
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
