import { randomUUID } from "node:crypto";
import { LeaseLostError, PermanentSendError, SendDeferredError } from "../core/delivery-errors.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { deadLettersTotal, deferralsTotal, turnsTotal } from "../ops/metrics.js";
import type { RoomLease } from "./room-lease.js";
import type { TurnGate } from "./turn-gate.js";
import type { TurnInput, TurnResult, TurnRunnerSettings } from "./turn-runner.js";

/**
 * Gives a turn that cannot go on now back to the scheduler: parked until it may
 * resume (a send window, a 429's retry_after, a retry backoff after a failure), or
 * to the dead letters (a refusal no retry can fix, a deadline missed), with the
 * turn's buffered writes. A lost lease writes nothing: another worker has the room.
 */
export async function parkTurn(
  settings: Pick<TurnRunnerSettings, "deadlineMs" | "retryMaxMs">,
  held: RoomLease,
  input: TurnInput,
  event: InboundEvent,
  gate: TurnGate,
  err: unknown,
  log: Logger,
): Promise<TurnResult> {
  if (err instanceof LeaseLostError || held.lost) {
    log.warn("room lease lost mid-turn; stopped before any further side effect");
    return {};
  }
  const attempts = Number(recordOf(input.record, event.eventId).attempts ?? "0");
  let kind: "wait" | "fail" | "final";
  let delay: number;
  if (err instanceof SendDeferredError) {
    kind = "wait";
    delay = err.waitMs;
    deferralsTotal.inc({
      platform: event.platform,
      reason: err.reason.startsWith("429") ? "429" : "window",
    });
  } else if (err instanceof PermanentSendError) {
    kind = "final";
    delay = 0;
  } else {
    kind = "fail";
    const backoff = Math.min(settings.retryMaxMs, 500 * 2 ** attempts);
    delay = backoff / 2 + Math.random() * (backoff / 2);
  }
  const reason = err instanceof Error ? err.message : String(err);
  const id = randomUUID();
  const reply = await held.park({
    writes: gate.writes(),
    booked: gate.bookedSlot(),
    head: input.head,
    delayMs: delay,
    kind,
    reason: reason.slice(0, 500),
    deadlineMs: settings.deadlineMs,
    letterId: id,
  });
  if (reply.kind === "lost") {
    log.warn("room lease lost while parking; another worker continues");
    return {};
  }
  if (reply.kind === "over") {
    log.info("the turn had ended already (its finish was applied, the answer to it lost); the room goes on");
    return {};
  }
  if (reply.kind === "dead" && kind === "final") {
    deadLettersTotal.inc({ platform: event.platform });
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "dead_letter" });
    // A kick, a block, a chat that is gone: an answer the platform refuses for good, not a missed deadline.
    log.warn(
      { refusal: reason, deadLetter: id, attempts: reply.attempts },
      "turn refused by the platform and no retry can fix it; moved to the dead letters at once",
    );
    return {};
  }
  if (reply.kind === "dead") {
    deadLettersTotal.inc({ platform: event.platform });
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "dead_letter" });
    log.error(
      { err, deadLetter: id, waitedMs: reply.waitedMs, attempts: reply.attempts },
      "turn could not be delivered by its deadline; moved to the dead letters (`roomgate dead-letters`)",
    );
    return {};
  }
  if (kind === "fail") {
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "failed" });
    log.warn(
      { err, attempt: reply.attempts, retryInMs: Math.round(delay) },
      "turn delivery failed; retrying",
    );
  } else {
    log.debug({ waitMs: Math.round(delay), reason }, "turn waits; room parked");
  }
  return { resumeInMs: Math.ceil(delay) };
}

/** The head turn's record, or an empty one when it belongs to another event. */
export function recordOf(record: Record<string, string>, eventId: string): Record<string, string> {
  return record.id === undefined || record.id === eventId ? record : {};
}
