import type { DeliveryLedger, PlatformSender } from "../core/adapter.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { TurnChannel } from "../engine/turn-channel.js";
import type { SideChannel } from "./side-channel.js";

/**
 * What early replies are recorded in: their turn is still running, and a turn retried
 * after a crash runs its call (and asks its questions) again, so nothing is reused.
 */
function memoryLedger(): DeliveryLedger {
  const sent = new Map<string, string>();
  return {
    get: async (key) => sent.get(key) ?? null,
    set: async (key, ref) => void sent.set(key, ref),
  };
}

/**
 * The channel of one turn on a live platform: progress and early replies go through
 * the room's sender (limited in-process, as a sender does without the scheduler's
 * gate), new events come from the room's side stream.
 */
export function liveChannel(
  event: InboundEvent,
  sender: PlatformSender,
  side: SideChannel,
  log: Logger,
): TurnChannel {
  let sent = 0;
  return {
    progress: async (update) => {
      try {
        await sender.progress?.(event, update);
      } catch (err) {
        // A status line that cannot be shown must not fail the call it reports on.
        log.warn({ err }, "progress update could not be shown");
      }
    },
    send: async (reply) => {
      sent += 1;
      const turnId = `${event.eventId}#${sent}`;
      // A plain message of its own: an early reply must not answer the turn's button press.
      const early: InboundEvent = { ...event, kind: "message", text: "", eventId: turnId };
      return sender.deliver(early, { reply }, { turnId, ledger: memoryLedger(), log });
    },
    mark: (fromTurn) => side.position(event.room, fromTurn ? event.eventId : undefined),
    eventsAfter: async (mark) => {
      const entries = await side.read(event.room, mark);
      const fresh: { id: string; event: InboundEvent }[] = [];
      for (const entry of entries) {
        if (entry.event.eventId === event.eventId) continue;
        if (await side.wasConsumed(event.room, entry.event.eventId)) continue;
        fresh.push(entry);
      }
      return fresh;
    },
    take: (taken) => side.consume(taken.room, taken.eventId),
    wasTaken: (e) => side.wasConsumed(e.room, e.eventId),
  };
}
