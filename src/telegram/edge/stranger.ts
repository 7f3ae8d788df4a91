import type { NextFunction } from "grammy";
import { edgeTexts } from "../../edge/edge-texts.js";
import { refusalsTotal } from "../../ops/metrics.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * Deny by default (DESIGN §9): a sender the bindings do not allow gets one refusal an
 * hour (a toast for a press), in the topic they wrote in, and nothing else — one log
 * line per sender an hour and one Redis key per chat and hour; repeats cost neither.
 * Nothing of theirs goes further.
 */
export async function stranger(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const { edge, chat, from, press } = ctx.seen;
  if (edge.sender.allowed) return next();
  const { identity, strangers, keys, log } = ctx.deps;
  refusalsTotal.inc({ platform: "telegram" });
  // How an operator learns the ids to allow: the log names them, once an hour.
  if (strangers.logOnce(edge.sender.id)) {
    log.info(
      { botId: identity.id, chatId: chat.id, userId: from.id, room: edge.room },
      "telegram: sender not on this bot's allowlist; refused (logged once an hour per sender)",
    );
  }
  if (press) return ctx.toast(press.id, edgeTexts.refusalToast);
  if (await strangers.claim(keys.refused(edge.room, edge.sender.id))) await ctx.sayHere(edgeTexts.refusal);
}
