import { ignoredTotal } from "../../ops/metrics.js";
import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * Whether the event is for the bot, as in Telegram groups (see MentionGate): a message
 * or file must mention the bot, reply to it, be a command, or be in a direct room or
 * one bound with `respond: all`; a reaction names an offer of the bot's and always is.
 */
export async function mention(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const classified = ctx.classified;
  if (classified.type === "reaction") {
    ctx.admitted = { ...classified, addressed: "button" };
    return next();
  }
  if (classified.type !== "message" && classified.type !== "file") return;
  const { replyTo, threadRoot } = classified;
  const verdict = await ctx.deps.gate.check(ctx.binding, {
    text: classified.type === "message" ? classified.text : "",
    content: ctx.content,
    ...(replyTo ? { replyTo } : {}),
    ...(threadRoot ? { threadRoot } : {}),
  });
  if (!verdict.addressed) {
    ignoredTotal.inc({ platform: "matrix", reason: "not_addressed" });
    ctx.log.debug("matrix: message not addressed to the bot");
    return;
  }
  ctx.admitted =
    classified.type === "file"
      ? { ...classified, addressed: verdict.addressed }
      : { ...classified, addressed: verdict.addressed, text: verdict.text };
  await next();
}
