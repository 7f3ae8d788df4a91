import { describe, expect, it } from "vitest";
import { LeaseLostError, PermanentSendError, SendDeferredError } from "../../src/core/delivery-errors.js";
import {
  NamespaceCrashedTwiceError,
  NamespaceRestartingError,
} from "../../src/namespace/namespace-errors.js";
import {
  NAMESPACE_WAIT_MS,
  TurnLifecycle,
  TurnStateError,
  UNCONFIRMED,
  verdictOf,
  type TurnState,
} from "../../src/scheduler/turn-lifecycle.js";

/**
 * The turn's states and the one table from what stopped a turn to what becomes of
 * it: what a person sees (an answer once, a wait, a line, a dead letter) follows from
 * these two, so each row is checked here.
 */
const context = { attempts: 0, waitedMs: 0, retryMaxMs: 30_000, computing: false as const };
const restarting = (waitMs: number) => new NamespaceRestartingError("echo", "restarting", undefined, waitMs);

describe("the verdict table", () => {
  it("an unconfirmed lease hands the room back at once; a deferral waits uncounted; a permanent refusal is dead-lettered at once", () => {
    expect(verdictOf(new LeaseLostError("r"), context)).toBe(UNCONFIRMED);
    expect(UNCONFIRMED).toEqual({ verdict: "wait", delayMs: 0 });
    expect(verdictOf(new SendDeferredError(1200, "429 retry_after"), context)).toEqual({
      verdict: "wait",
      delayMs: 1200,
    });
    expect(verdictOf(new PermanentSendError("bot was kicked"), context)).toEqual({
      verdict: "dead",
      delayMs: 0,
    });
  });

  it("anything else is a failed attempt, retried after a backoff that doubles from 0.5 s up to the longest", () => {
    const delays = [0, 1, 2, 10].map((attempts) => verdictOf(new Error("boom"), { ...context, attempts }));
    expect(delays.map((d) => d.verdict)).toEqual(["retry", "retry", "retry", "retry"]);
    const ms = delays.map((d) => ("delayMs" in d ? d.delayMs : NaN));
    expect(ms[0]).toBeGreaterThanOrEqual(250);
    expect(ms[0]).toBeLessThanOrEqual(500);
    expect(ms[2]).toBeGreaterThanOrEqual(1000);
    expect(ms[2]).toBeLessThanOrEqual(2000);
    expect(ms[3]).toBeGreaterThanOrEqual(15_000);
    expect(ms[3]).toBeLessThanOrEqual(30_000);
  });

  it("while computing: a message that crashed its namespace twice gets its line and is set aside", () => {
    const err = new NamespaceCrashedTwiceError("echo", "echo", undefined, "ab12cd34");
    expect(verdictOf(err, { ...context, computing: true })).toEqual({
      verdict: "line",
      text: err.userText,
      setAside: "its message crashed the namespace twice (ref ab12cd34)",
    });
  });

  it("while computing: a restarting namespace is waited for, then the person gets its line", () => {
    const computing = { ...context, computing: true };
    expect(verdictOf(restarting(100), computing)).toEqual({ verdict: "wait", delayMs: 250 });
    expect(verdictOf(restarting(4000), { ...computing, waitedMs: NAMESPACE_WAIT_MS - 1 })).toEqual({
      verdict: "wait",
      delayMs: 4000,
    });
    const late = verdictOf(restarting(4000), { ...computing, waitedMs: NAMESPACE_WAIT_MS });
    expect(late.verdict).toBe("line");
  });

  it("a namespace's error outside the computation is a failed attempt, never a line", () => {
    expect(verdictOf(restarting(100), context).verdict).toBe("retry");
    expect(verdictOf(new NamespaceCrashedTwiceError("echo", "echo", undefined), context).verdict).toBe(
      "retry",
    );
  });
});

describe("the turn's states", () => {
  const walk = (...states: TurnState[]) => {
    const turn = new TurnLifecycle();
    for (const s of states) turn.to(s);
    return turn.state;
  };

  it("a delivered turn: claimed, stepped, sending (each part), finished", () => {
    expect(walk("stepped", "sending", "stepped", "sending", "finished")).toBe("finished");
    expect(walk("finished")).toBe("finished");
  });

  it("a turn may stop in any state before its end: parked, dead-lettered or lost", () => {
    for (const end of ["parked", "dead-lettered", "lost"] as const) {
      expect(walk(end)).toBe(end);
      expect(walk("stepped", end)).toBe(end);
      expect(walk("stepped", "sending", end)).toBe(end);
    }
  });

  it("an end is final, and nothing is sent before its step", () => {
    expect(() => walk("finished", "sending")).toThrow(TurnStateError);
    expect(() => walk("parked", "finished")).toThrow("a turn cannot go from parked to finished");
    expect(() => walk("lost", "stepped")).toThrow(TurnStateError);
    expect(() => walk("sending")).toThrow("a turn cannot go from claimed to sending");
  });
});
