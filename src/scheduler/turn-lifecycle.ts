import { LeaseLostError, PermanentSendError, SendDeferredError } from "../core/delivery-errors.js";
import { NamespaceCrashedTwiceError, NamespaceRestartingError } from "../namespace/namespace-errors.js";

/**
 * A turn's states, from the claim that handed it to a worker to its end:
 *
 *   claimed ─▶ stepped ⇄ sending ─▶ finished | parked | dead-lettered | lost
 *                 ↺ (a step again, before a send)
 *      └──────────────────────────▶ finished | parked | dead-lettered | lost
 *
 * `stepped`: the fenced step before a send is written (the turn's commit, the part
 * marked as being sent); `sending`: the part's request is out; `finished`: popped
 * from the inbox, the room let go or kept for its next turn; `parked`: the room given
 * back until the turn may resume; `dead-lettered`: moved to the shard's dead letters;
 * `lost`: the lease is another worker's, nothing more is written.
 */
export type TurnState = "claimed" | "stepped" | "sending" | "finished" | "parked" | "dead-lettered" | "lost";

const ENDS = ["finished", "parked", "dead-lettered", "lost"] as const;

/** Every transition a turn may make; an end is final. */
const NEXT: Record<TurnState, readonly TurnState[]> = {
  claimed: ["stepped", ...ENDS],
  stepped: ["stepped", "sending", ...ENDS],
  sending: ["stepped", ...ENDS],
  finished: [],
  parked: [],
  "dead-lettered": [],
  lost: [],
};

/** A transition the table does not list: a bug in the scheduler, never a user's doing. */
export class TurnStateError extends Error {
  constructor(
    readonly from: TurnState,
    readonly to: TurnState,
  ) {
    super(`a turn cannot go from ${from} to ${to}`);
    this.name = "TurnStateError";
  }
}

/** One turn's state; every change goes through `to`, which refuses what the table does not list. */
export class TurnLifecycle {
  private current: TurnState = "claimed";

  /** Where the turn is now. */
  get state(): TurnState {
    return this.current;
  }

  /** Moves the turn on; throws TurnStateError for a transition the table does not list. */
  to(next: TurnState): void {
    if (!NEXT[this.current].includes(next)) throw new TurnStateError(this.current, next);
    this.current = next;
  }
}

/**
 * What becomes of a turn that stopped on an error: a park that waits (not an attempt)
 * or retries (an attempt) after `delayMs`; the dead letters at once; or, for a
 * computation that cannot be done, a line the person gets as the turn's outcome
 * (`setAside`: the turn then goes to the dead letters). A lease Redis says is another
 * worker's is none of these: the turn is lost before any verdict, nothing is written.
 */
export type Verdict = ParkingVerdict | { verdict: "line"; text: string; setAside?: string };

/** A verdict of an error outside the computation: the turn is parked, never answered with a line. */
export interface ParkingVerdict {
  verdict: "wait" | "retry" | "dead";
  delayMs: number;
}

/**
 * A lease not confirmed lately (Redis could not take its renewals: a failover) but not
 * known to be another worker's: nothing more is sent, and the room is handed back at
 * once with what was sent recorded (fenced), so whoever takes the turn on does not send
 * it again.
 */
export const UNCONFIRMED: ParkingVerdict = { verdict: "wait", delayMs: 0 };

/** What the verdict table reads besides the error. */
export interface VerdictContext {
  /** Failed attempts of the turn so far. */
  attempts: number;
  /** How long the turn has waited since its first wait, ms. */
  waitedMs: number;
  /** The longest backoff between retries, ms. */
  retryMaxMs: number;
  /** True while the turn's outcome is being computed (a namespace's errors are answered with a line only then). */
  computing: boolean;
}

/** How long a turn waits for its namespace to finish restarting before the person gets its line. */
export const NAMESPACE_WAIT_MS = 120_000;

/**
 * The one table from what stopped a turn to what becomes of it, first match wins:
 * an unconfirmed lease hands the room back (UNCONFIRMED); a deferral (a send
 * window, a 429's retry_after) waits, not counted as an attempt; a refusal no retry
 * can fix goes to the dead letters at once; while computing, a message that crashed
 * its namespace twice is set aside with its line, and a restarting namespace is
 * waited for (at most NAMESPACE_WAIT_MS, then the person gets its line); anything
 * else (a namespace's error outside the computation too) is a failed
 * attempt, retried with a jittered backoff that doubles from 0.5 s.
 */
const VERDICTS: {
  when: (err: unknown, c: VerdictContext) => boolean;
  then: (err: never, c: VerdictContext) => Verdict;
}[] = [
  { when: (err) => err instanceof LeaseLostError, then: () => UNCONFIRMED },
  {
    when: (err) => err instanceof SendDeferredError,
    then: (err: SendDeferredError) => ({ verdict: "wait", delayMs: err.waitMs }),
  },
  { when: (err) => err instanceof PermanentSendError, then: () => ({ verdict: "dead", delayMs: 0 }) },
  {
    when: (err, c) => c.computing && err instanceof NamespaceCrashedTwiceError,
    then: (err: NamespaceCrashedTwiceError) => ({
      verdict: "line",
      text: err.userText,
      setAside: `its message crashed the namespace twice (ref ${err.ref})`,
    }),
  },
  {
    when: (err, c) => c.computing && err instanceof NamespaceRestartingError,
    then: (err: NamespaceRestartingError, c) =>
      c.waitedMs < NAMESPACE_WAIT_MS
        ? { verdict: "wait", delayMs: Math.max(250, err.waitMs) }
        : { verdict: "line", text: err.userText },
  },
  {
    when: () => true,
    then: (_, c) => {
      const backoff = Math.min(c.retryMaxMs, 500 * 2 ** c.attempts);
      return { verdict: "retry", delayMs: backoff / 2 + Math.random() * (backoff / 2) };
    },
  },
];

/** What the table says of `err`: a line only for an error of the computation. */
export function verdictOf(err: unknown, context: VerdictContext & { computing: false }): ParkingVerdict;
export function verdictOf(err: unknown, context: VerdictContext): Verdict;
export function verdictOf(err: unknown, context: VerdictContext): Verdict {
  return VERDICTS.find((v) => v.when(err, context))!.then(err as never, context);
}
