import type { NextFunction } from "grammy";
import type { Message } from "grammy/types";
import type { EditsConfig } from "../../core/config.js";
import type { Logger } from "../../core/log.js";
import { editsTotal } from "../../ops/metrics.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * `edited_message`: an edit asked again goes on as a new message (its update id keeps
 * it apart from the original); any other edit is noted in the log and goes no further.
 */
export async function edit(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const edited = ctx.update.edited_message;
  if (!edited) return next();
  if (!reaskEdit(edited, ctx.deps.identity.edits, ctx.deps.log)) return;
  ctx.taken = { update_id: ctx.update.update_id, message: edited };
  await next();
}

/**
 * Whether an edited message is asked again: only with `edits.reask` on and when it
 * was edited within `edits.windowSeconds` of being sent (Telegram's own dates, since
 * the platform sets both). Otherwise the edit is noted in the log.
 */
function reaskEdit(message: Message, edits: EditsConfig | undefined, log: Logger): boolean {
  const where = { chatId: message.chat.id, messageId: message.message_id };
  const ageSeconds = (message.edit_date ?? message.date) - message.date;
  const reason = !edits?.reask
    ? "edits.reask is off"
    : ageSeconds > edits.windowSeconds
      ? "outside edits.windowSeconds"
      : undefined;
  if (reason) {
    editsTotal.inc({ platform: "telegram", action: "ignored" });
    log.info({ ...where, reason }, "telegram: edited message not asked again");
    return false;
  }
  editsTotal.inc({ platform: "telegram", action: "reasked" });
  log.info({ ...where, ageSeconds }, "telegram: edited message asked again");
  return true;
}
