import type { NextFunction } from "grammy";
import { pairingCodeIn } from "../../access/pairing-gate.js";
import { telegramBindingNames } from "../../access/telegram.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * `/pair <code>` from anyone, before the allowlist (a stranger is who pairs): a code
 * that opens one of this bot's bindings adds the sender to it; the answer goes straight
 * back from the edge and the message goes no further.
 */
export async function pairing(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const text = ctx.taken.message?.text;
  const code = text === undefined ? undefined : pairingCodeIn(text);
  const { pairing: gate, identity } = ctx.deps;
  if (code === undefined || !gate) return next();
  const names = telegramBindingNames(identity.config);
  const { sender, room } = ctx.seen.edge;
  const reply = await gate.redeem(
    {
      senderId: sender.id,
      ...(sender.name ? { name: sender.name } : {}),
      room,
      accepts: (b) => names.has(b),
    },
    code,
  );
  if (reply) await ctx.sayHere(reply);
}
