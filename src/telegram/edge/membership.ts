import type { NextFunction } from "grammy";
import type { EdgeContext } from "./edge-context.js";
import { isBoundChat, leaveChat } from "./unbound-chats.js";

/**
 * `my_chat_member`: the bot was added to a chat. A group no binding names is left, with
 * one notice; the update goes no further either way.
 */
export async function membership(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const change = ctx.update.my_chat_member;
  if (!change) return next();
  const { chat, new_chat_member: member } = change;
  if (chat.type === "private" || (member.status !== "member" && member.status !== "administrator")) return;
  if (await isBoundChat(ctx, chat.id)) return;
  await leaveChat(ctx, chat.id, chat.type);
}
