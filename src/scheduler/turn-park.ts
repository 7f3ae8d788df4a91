import { randomUUID } from "node:crypto";
import { SendDeferredError } from "../core/delivery-errors.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { deadLettersTotal, deferralsTotal, turnsTotal } from "../ops/metrics.js";
import type { RoomLease } from "./room-lease.js";
import type { TurnGate } from "./turn-gate.js";
import { UNCONFIRMED, verdictOf, type TurnLifecycle } from "./turn-lifecycle.js";
import {
  recordOf,
  waitedOf,
  type TurnInput,
  type TurnResult,
  type TurnRunnerSettings,
} from "./turn-input.js";

type Settings = Pick<TurnRunnerSettings, "deadlineMs" | "retryMaxMs">;

/**
 * Gives a turn that cannot go on now back to the scheduler, as the verdict table
 * (src/scheduler/turn-lifecycle.ts) says: parked until it may resume (a send window, a 429's retry_after, a retry
 * backoff after a failure), or to the dead letters (a refusal no retry can fix, a
 * deadline missed), with the turn's buffered writes. A lease Redis says is another
 * worker's writes nothing; one only unconfirmed (renewals not taken for a lease: a
 * failover) hands the room back with what was sent recorded, fenced, so a worker taking
 * over does not send it again.
 */
export async function parkTurn(
  settings: Settings,
  turn: TurnLifecycle,
  held: RoomLease,
  input: TurnInput,
  event: InboundEvent,
  gate: TurnGate,
  err: unknown,
  log: Logger,
): Promise<TurnResult> {
  const from = turn.state;
  if (held.taken) {
    turn.to("lost");
    log.warn({ state: from }, "room lease lost mid-turn; stopped before any further side effect");
    return {};
  }
  const record = recordOf(input.record, event.eventId);
  const context = {
    attempts: Number(record.attempts ?? "0"),
    waitedMs: waitedOf(input, record),
    retryMaxMs: settings.retryMaxMs,
    computing: false as const,
  };
  const verdict = held.lost ? UNCONFIRMED : verdictOf(err, context);
  if (verdict === UNCONFIRMED) {
    log.warn(
      { state: from },
      "room lease unconfirmed mid-turn; nothing more is sent, what was sent is recorded and the room handed back",
    );
  } else if (verdict.verdict === "wait") {
    const is429 = err instanceof SendDeferredError && err.reason.startsWith("429");
    deferralsTotal.inc({ platform: event.platform, reason: is429 ? "429" : "window" });
  }
  const reason = err instanceof Error ? err.message : String(err);
  const id = randomUUID();
  const reply = await held.park({
    writes: gate.writes(),
    booked: gate.bookedSlot(),
    head: input.head,
    delayMs: verdict.delayMs,
    verdict: verdict.verdict,
    reason: reason.slice(0, 500),
    deadlineMs: settings.deadlineMs,
    letterId: id,
  });
  if (reply.kind === "lost") {
    turn.to("lost");
    log.warn("room lease lost while parking; another worker continues");
    return {};
  }
  if (reply.kind === "over") {
    turn.to("finished");
    log.info("the turn had ended already (its finish was applied, the answer to it lost); the room goes on");
    return {};
  }
  if (reply.kind === "dead") {
    turn.to("dead-lettered");
    deadLettersTotal.inc({ platform: event.platform });
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "dead_letter" });
    if (verdict.verdict === "dead") {
      // A kick, a block, a chat that is gone: an answer the platform refuses for good, not a missed deadline.
      log.warn(
        { refusal: reason, deadLetter: id, attempts: reply.attempts },
        "turn refused by the platform and no retry can fix it; moved to the dead letters at once",
      );
    } else {
      log.error(
        { err, deadLetter: id, waitedMs: reply.waitedMs, attempts: reply.attempts, state: from },
        "turn could not be delivered by its deadline; moved to the dead letters (`roomgate dead-letters`)",
      );
    }
    return {};
  }
  turn.to("parked");
  if (verdict.verdict === "retry") {
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "failed" });
    log.warn(
      { err, attempt: reply.attempts, retryInMs: Math.round(verdict.delayMs), state: from },
      "turn delivery failed; retrying",
    );
  } else {
    log.debug({ waitMs: Math.round(verdict.delayMs), reason }, "turn waits; room parked");
  }
  return { resumeInMs: Math.ceil(verdict.delayMs) };
}
