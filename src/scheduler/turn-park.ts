import { randomUUID } from "node:crypto";
import { LeaseLostError, PermanentSendError, SendDeferredError } from "../core/delivery-errors.js";
import type { InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { deadLettersTotal, deferralsTotal, turnsTotal } from "../ops/metrics.js";
import type { RoomLease } from "./room-lease.js";
import type { ParkVerdict } from "./scheduler-args.js";
import type { TurnGate } from "./turn-gate.js";
import type { TurnInput, TurnResult, TurnRunnerSettings } from "./turn-runner.js";

/** What becomes of a turn that stopped on an error: nothing (lost), or a park with a verdict and a delay. */
type Verdict = { verdict: "lost" } | { verdict: ParkVerdict; delayMs: number };

type Settings = Pick<TurnRunnerSettings, "deadlineMs" | "retryMaxMs">;

/**
 * The one table from what stopped a turn to what becomes of it, first match wins:
 * a lost lease writes nothing (another worker has the room); a deferral (a send
 * window, a 429's retry_after, a restarting namespace) waits, not counted as an
 * attempt; a refusal no retry can fix goes to the dead letters at once; anything
 * else is a failed attempt, retried with a jittered backoff that doubles from 0.5 s.
 */
const VERDICTS: {
  when: (err: unknown) => boolean;
  then: (err: unknown, attempts: number, s: Settings) => Verdict;
}[] = [
  { when: (err) => err instanceof LeaseLostError, then: () => ({ verdict: "lost" }) },
  {
    when: (err) => err instanceof SendDeferredError,
    then: (err) => ({ verdict: "wait", delayMs: (err as SendDeferredError).waitMs }),
  },
  { when: (err) => err instanceof PermanentSendError, then: () => ({ verdict: "dead", delayMs: 0 }) },
  {
    when: () => true,
    then: (_, attempts, s) => {
      const backoff = Math.min(s.retryMaxMs, 500 * 2 ** attempts);
      return { verdict: "retry", delayMs: backoff / 2 + Math.random() * (backoff / 2) };
    },
  },
];

/** What the table says of `err` for a turn that failed `attempts` times before. */
export function verdictOf(err: unknown, attempts: number, settings: Settings): Verdict {
  return VERDICTS.find((v) => v.when(err))!.then(err, attempts, settings);
}

/**
 * Gives a turn that cannot go on now back to the scheduler, as the verdict table
 * says: parked until it may resume (a send window, a 429's retry_after, a retry
 * backoff after a failure), or to the dead letters (a refusal no retry can fix, a
 * deadline missed), with the turn's buffered writes. A lost lease writes nothing.
 */
export async function parkTurn(
  settings: Settings,
  held: RoomLease,
  input: TurnInput,
  event: InboundEvent,
  gate: TurnGate,
  err: unknown,
  log: Logger,
): Promise<TurnResult> {
  const attempts = Number(recordOf(input.record, event.eventId).attempts ?? "0");
  const verdict: Verdict = held.lost ? { verdict: "lost" } : verdictOf(err, attempts, settings);
  if (verdict.verdict === "lost") {
    log.warn("room lease lost mid-turn; stopped before any further side effect");
    return {};
  }
  if (err instanceof SendDeferredError) {
    deferralsTotal.inc({ platform: event.platform, reason: err.reason.startsWith("429") ? "429" : "window" });
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
    log.warn("room lease lost while parking; another worker continues");
    return {};
  }
  if (reply.kind === "over") {
    log.info("the turn had ended already (its finish was applied, the answer to it lost); the room goes on");
    return {};
  }
  if (reply.kind === "dead") {
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
        { err, deadLetter: id, waitedMs: reply.waitedMs, attempts: reply.attempts },
        "turn could not be delivered by its deadline; moved to the dead letters (`roomgate dead-letters`)",
      );
    }
    return {};
  }
  if (verdict.verdict === "retry") {
    turnsTotal.inc({ platform: event.platform, namespace: event.namespace, outcome: "failed" });
    log.warn(
      { err, attempt: reply.attempts, retryInMs: Math.round(verdict.delayMs) },
      "turn delivery failed; retrying",
    );
  } else {
    log.debug({ waitMs: Math.round(verdict.delayMs), reason }, "turn waits; room parked");
  }
  return { resumeInMs: Math.ceil(verdict.delayMs) };
}

/** The head turn's record, or an empty one when it belongs to another event. */
export function recordOf(record: Record<string, string>, eventId: string): Record<string, string> {
  return record.id === undefined || record.id === eventId ? record : {};
}
