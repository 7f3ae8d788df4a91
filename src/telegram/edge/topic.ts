import type { NextFunction } from "grammy";
import type { EdgeContext } from "./edge-context.js";

/**
 * Reads the topics the bot made in a private chat before the edge record is decided,
 * so that a topic's room is bound to its namespace; only for senders the bot serves
 * in direct chats. Every update goes on.
 */
export async function topic(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const { topics, config } = ctx.deps.identity;
  const { message, callback_query: press } = ctx.taken;
  const chat = message?.chat ?? press?.message?.chat;
  const from = message?.from ?? press?.from;
  if (
    topics &&
    config.topics.length > 0 &&
    chat?.type === "private" &&
    from &&
    config.users.includes(from.id)
  ) {
    await topics.load(chat.id);
  }
  await next();
}
