import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * In an encrypted room, an event that came in the clear is not read: the homeserver
 * itself could have written it (state events excepted).
 */
export async function cleartext(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const { policy, botUserId } = ctx.deps;
  if (policy.clearInEncrypted(ctx.roomId, ctx.event, ctx.arrival.encrypted, botUserId)) return;
  await next();
}
