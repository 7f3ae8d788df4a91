import type { NextFunction } from "grammy";
import type { EdgeContext } from "./edge-context.js";

/**
 * A room bound to no namespace — the General listing a chat's topics, a topic whose
 * agent is gone — is answered here, within the flood limits; it goes no further.
 */
export async function lobby(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const seen = ctx.seen;
  if (seen.binding.kind === "agent") return next();
  const verdict = await ctx.deps.flood.check(seen.edge.room, seen.edge.sender.id);
  if (!verdict.admit) return ctx.refuseFlood(verdict.notice);
  await ctx.deps.lobby?.answer(ctx.taken, seen);
}
