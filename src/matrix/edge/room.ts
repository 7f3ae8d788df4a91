import type { MatrixEdgeContext } from "./edge-context.js";

/** Only bound rooms the bot serves now (see EncryptionPolicy.serves) are read; anything else is dropped unread. */
export async function room(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const binding = ctx.deps.bindings.get(ctx.roomId);
  if (!binding || !ctx.deps.policy.serves(ctx.roomId)) return;
  ctx.binding = binding;
  await next();
}
