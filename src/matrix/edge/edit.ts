import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * An edit (m.replace) is reviewed: with `edits.reask` on, the author's own edit within
 * the window goes on as a message (read for mentions in its new content); any other
 * edit is noted in the log and goes no further.
 */
export async function edit(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const classified = ctx.classified;
  if (classified.type !== "edit") return next();
  const edited = await ctx.deps.edits.review(ctx.roomId, ctx.event, classified);
  if (!edited) return;
  const { text, replyTo, threadRoot, content } = edited;
  ctx.classified = {
    type: "message",
    text,
    ...(replyTo ? { replyTo } : {}),
    ...(threadRoot ? { threadRoot } : {}),
  };
  ctx.content = content;
  await next();
}
