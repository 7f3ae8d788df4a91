import type { NextFunction } from "grammy";
import { loggableError } from "../loggable-error.js";
import type { EdgeContext } from "./edge-context.js";
import { queue } from "./enqueue.js";

/**
 * A document: downloaded only once admitted, so its flood check comes first, on its
 * own; then it is read and queued off the update's path (the sequential intake never
 * waits for a download), in its chat's order.
 */
export async function document(ctx: EdgeContext, next: NextFunction): Promise<void> {
  if (!ctx.taken.message?.document) return next();
  const { edge, chat } = ctx.seen;
  const verdict = await ctx.deps.flood.check(edge.room, edge.sender.id);
  if (!verdict.admit) return ctx.refuseFlood(verdict.notice);
  ctx.deps.reads.later(
    chat.id,
    () => queue(ctx, false),
    (err) =>
      ctx.deps.log.error(
        { err: loggableError(err), updateId: ctx.taken.update_id },
        "telegram: a document could not be queued",
      ),
  );
}
