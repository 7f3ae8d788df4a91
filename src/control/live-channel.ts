import type { DeliveryLedger, PlatformSender } from "../core/adapter.js";
import { FileFetchError } from "../core/errors.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { TurnChannel } from "../engine/turn-channel.js";
import type { RoomInboxReader } from "../scheduler/room-inbox-reader.js";
import type { RoomSignals } from "../scheduler/room-signals.js";
import { RoomWatch } from "./room-watch.js";

/** How a running turn hears of the events queued behind it. */
export interface QueueWatching {
  inbox: RoomInboxReader;
  signals: RoomSignals;
  /** How often a watch re-reads the inbox in case a signal was lost, ms. */
  recheckMs: number;
}

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
 * gate), queued events are read from the room's inbox when a signal says one came.
 */
export function liveChannel(
  event: InboundEvent,
  sender: PlatformSender,
  queue: QueueWatching,
  log: Logger,
): TurnChannel {
  let sent = 0;
  // Read only when a Stop is queued behind the turn: the Telegram sender hashes the turn for it.
  let progressRef: { ref: string | undefined } | undefined;
  return {
    get progressRef() {
      progressRef ??= { ref: sender.progressRef?.(event) };
      return progressRef.ref;
    },
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
    notify: async (other, text) => {
      const turnId = `${other.eventId}#notice`;
      try {
        await sender.deliver(other, { reply: null, toast: text }, { turnId, ledger: memoryLedger(), log });
      } catch (err) {
        log.warn({ err }, "a notice to another member could not be sent");
      }
    },
    watch: (from) => RoomWatch.open(event, from, queue.inbox, queue.signals, queue.recheckMs),
    fetchFile: async (file, limits) => {
      if (!sender.fetchFile) {
        throw new FileFetchError(`${sender.platform} cannot fetch files`, {
          userText: "Files cannot be passed on from this chat.",
        });
      }
      return sender.fetchFile(event, file, limits);
    },
  };
}
