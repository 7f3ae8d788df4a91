import { classifyEvent } from "../classify-event.js";
import type { MatrixEdgeContext } from "./edge-context.js";

/**
 * Decides what the event is, without I/O: the bot's own events, notices and unknown
 * kinds are dropped; new power levels are kept for the room; an encrypted event here is
 * one this process cannot decrypt (no device, or a room without encryption on). What
 * remains — a message, a reaction, a file, an edit — goes on.
 */
export async function classify(ctx: MatrixEdgeContext, next: () => Promise<void>): Promise<void> {
  const { botUserId, maxFileBytes, levels } = ctx.deps;
  const classified = classifyEvent(ctx.event, { botUserId, maxFileBytes });
  switch (classified.type) {
    case "ignore":
      ctx.log.debug({ reason: classified.reason }, "matrix event ignored");
      return;
    case "encrypted":
      // m.room.encryption was taken before the batch (EncryptionPolicy.encryptionOn).
      return;
    case "power-levels":
      levels.set(ctx.roomId, classified.levels);
      return;
  }
  ctx.classified = classified;
  await next();
}
