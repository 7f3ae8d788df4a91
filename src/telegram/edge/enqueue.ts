import type { InboundEvent } from "../../core/event.js";
import { UnqueuedEventError } from "../../core/unqueued.js";
import { loggableError } from "../loggable-error.js";
import { normalizeUpdate } from "../update-normalizer.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * The last step: the update, admitted, is normalised and queued with its flood limits
 * checked in the same round trip; the excess gets its one notice instead of being
 * queued. It throws UnqueuedEventError when the inbox cannot take the event, so that
 * the update is not confirmed and arrives again (and its person may be told).
 */
export async function enqueue(ctx: EdgeContext): Promise<void> {
  await queue(ctx, true);
}

/**
 * Normalises and queues the update; with `limited` its flood limits are checked in the
 * same round trip (a document's were checked before it was read).
 */
export async function queue(ctx: EdgeContext, limited: boolean): Promise<void> {
  const { flood, identity, inbox, readDocument, log } = ctx.deps;
  let event: InboundEvent | null;
  try {
    event = await normalizeUpdate(ctx.taken, ctx.seen, identity, readDocument);
  } catch (err) {
    // A malformed update would otherwise stall the bot: it is logged and skipped.
    log.error(
      { err: loggableError(err), updateId: ctx.taken.update_id },
      "telegram: could not read an update; skipped",
    );
    return;
  }
  if (event === null) return;
  const room = event.room;
  const unqueued = (err: unknown) => {
    throw new UnqueuedEventError(room, err);
  };
  if (!limited) {
    const fresh = await inbox.enqueue(event).catch(unqueued);
    log.debug({ eventId: event.eventId, room: event.room, fresh }, "telegram: update enqueued");
    return;
  }
  const queued = await flood.enqueue(inbox, event, event.sender.id).catch(unqueued);
  if (!queued.admit) return ctx.refuseFlood(queued.notice);
  log.debug({ eventId: event.eventId, room: event.room, fresh: queued.fresh }, "telegram: update enqueued");
}
