import type { MatrixEdgeContext } from "./edge-context.js";

/** An event from before the bot was in the room (see historyOf) is not answered. */
export async function history(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  if (!ctx.arrival.history) return next();
  ctx.log.debug("matrix event from before the bot was there; not answered");
}
