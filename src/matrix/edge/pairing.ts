import { pairingCodeIn } from "../../access/pairing-gate.js";
import { matrixRoom } from "../../core/room.js";
import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * `/pair <code>` from anyone, before the allowlist (a stranger is who pairs): a code for
 * this room's binding adds the sender to it; the answer goes straight back and the
 * message goes no further.
 */
export async function pairing(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const classified = ctx.classified;
  const code = classified.type === "message" ? pairingCodeIn(classified.text) : undefined;
  const gate = ctx.deps.pairing;
  if (code === undefined || !gate) return next();
  const name = ctx.binding.name;
  const reply = await gate.redeem(
    { senderId: ctx.event.sender, room: matrixRoom(ctx.roomId), accepts: (binding) => binding === name },
    code,
  );
  if (reply) await ctx.say(reply);
}
