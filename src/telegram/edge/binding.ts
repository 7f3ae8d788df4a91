import type { NextFunction } from "grammy";
import { edgeOf } from "../edge-record.js";
import type { EdgeContext } from "./edge-context.js";
import { isBoundChat, leaveChat } from "./unbound-chats.js";

/**
 * Decides the update's edge record (its room, sender, whether the sender is allowed,
 * what the room is bound to), once and without I/O, for the steps after it. An update
 * not for the bot goes no further; a group no binding names is left, with one notice.
 */
export async function binding(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const seen = edgeOf(ctx.taken, ctx.deps.identity);
  if (seen === null) return;
  const { chat } = seen;
  if (chat.type !== "private" && !(await isBoundChat(ctx, chat.id)))
    return leaveChat(ctx, chat.id, chat.type);
  ctx.seen = seen;
  await next();
}
