import { matrixRoom } from "../../core/room.js";
import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * The last step: the flood limits, then the InboundEvent built (a reaction's target
 * fetched, a file downloaded) and queued. A file is downloaded and a reaction's target
 * fetched only once admitted, so their flood check comes first, on its own; a message
 * is checked in its enqueue's round trip. Files are read off the sync loop, in their
 * room's order. An event of the sync loop that Redis does not take fails its batch
 * (fetched again until it is queued) and, once that has lasted, its room is told once.
 */
export async function enqueue(ctx: MatrixEdgeContext): Promise<void> {
  const { flood, reads, log } = ctx.deps;
  const admitted = ctx.admitted;
  if (flood && admitted.type !== "message") {
    const verdict = await flood.check(matrixRoom(ctx.roomId, ctx.thread), ctx.event.sender);
    if (!verdict.admit) return refused(ctx, verdict.notice);
  }
  if (admitted.type !== "file") return told(ctx);
  reads.later(
    ctx.roomId,
    () => queue(ctx),
    (err) => log.error({ err, roomId: ctx.roomId }, "a Matrix file could not be queued"),
  );
}

/** Queues an event of the sync loop: a room just told of an outage gets its answer after the notice. */
async function told(ctx: MatrixEdgeContext): Promise<void> {
  const { outage } = ctx.deps;
  const { roomId, event } = ctx;
  await outage.heldBack(roomId);
  try {
    await queue(ctx);
  } catch (err) {
    const thread = ctx.thread;
    outage.failed(
      { roomId, eventId: event.event_id, sender: event.sender, ...(thread ? { threadRoot: thread } : {}) },
      err,
    );
    throw err;
  }
  outage.queued(event.event_id);
}

async function queue(ctx: MatrixEdgeContext): Promise<void> {
  const { builder, inbox, flood } = ctx.deps;
  const admitted = ctx.admitted;
  const inbound = await builder.build(ctx.binding, ctx.event, admitted, true);
  if (!inbound) return;
  if (!flood || admitted.type !== "message") {
    const fresh = await inbox.enqueue(inbound);
    ctx.log.debug({ kind: inbound.kind, fresh }, "matrix event enqueued");
    return;
  }
  const queued = await flood.enqueue(inbox, inbound, ctx.event.sender);
  if (!queued.admit) return refused(ctx, queued.notice);
  ctx.log.debug({ kind: inbound.kind, fresh: queued.fresh }, "matrix event enqueued");
}

/** Over a flood limit: the one notice, when it is due. */
async function refused(ctx: MatrixEdgeContext, notice: string | undefined): Promise<void> {
  if (notice) await ctx.say(notice);
}
