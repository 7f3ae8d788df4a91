import { refusalsTotal } from "../../ops/metrics.js";
import { isAllowed } from "../room-policy.js";
import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * Deny by default (DESIGN §9): a sender the binding does not allow is refused at most
 * once an hour, only for what is addressed to the bot (decided without I/O), and a
 * reaction never earns a notice, so a stranger cannot make the bot post at will.
 * Nothing of theirs goes further.
 */
export async function stranger(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const { binding, classified, event } = ctx;
  const { levels, paired, gate, notices } = ctx.deps;
  const roomLevels = binding.powerLevel === undefined ? undefined : await levels.of(ctx.roomId);
  if (isAllowed(binding, event.sender, roomLevels, paired)) return next();
  // A stranger's chatter not addressed to the bot is ignored without a word, and without I/O.
  const addressed =
    classified.type === "reaction" ||
    (classified.type !== "edit" &&
      gate.checkOffline(binding, {
        text: classified.type === "message" ? classified.text : "",
        content: event.content,
      }));
  if (!addressed) return;
  if (notices.logOnce(event.sender)) {
    ctx.log.info(
      { sender: event.sender },
      "matrix sender not allowed in this room; refused (logged once an hour)",
    );
  }
  refusalsTotal.inc({ platform: "matrix" });
  if (classified.type !== "reaction")
    await notices.refuse(ctx.roomId, event.event_id, event.sender, ctx.thread);
}
