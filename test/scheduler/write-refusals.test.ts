import { expect, it, vi } from "vitest";
import {
  isUnreachable,
  isWriteRefusal,
  takeoverGraceMs,
  WriteRefusals,
} from "../../src/scheduler/write-refusals.js";

const refused = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

it("holds takeovers back for a grace after the last write Redis refused", () => {
  const seen = new WriteRefusals();
  const grace = takeoverGraceMs(10_000);
  expect(grace).toBe(3500);
  seen.note(refused("ERR user_script:1: Script attempted to access a non local key"));
  seen.note(refused("MOVED 3999 127.0.0.1:6381"));
  expect(seen.takeoverHoldMs(grace)).toBe(0);
  const at = Date.now();
  seen.note(
    refused(
      "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
    ),
  );
  expect(seen.takeoverHoldMs(grace, at + 1000)).toBeGreaterThan(2000);
  expect(seen.takeoverHoldMs(grace, at + grace + 50)).toBe(0);
  expect(isWriteRefusal(refused("OOM command not allowed when used memory > 'maxmemory'. script: abc"))).toBe(
    true,
  );
  expect(isWriteRefusal(refused("ERR user_script:1: OOM in a message"))).toBe(false);
});

it("holds takeovers back after writes that did not reach a master, since holders could not renew either", () => {
  for (const message of [
    "Connection is closed.",
    "connect ECONNREFUSED 127.0.0.1:6379",
    "NOREPLICAS Not enough good replicas to write.",
    "READONLY You can't write against a read only replica.",
    "CLUSTERDOWN The cluster is down",
  ]) {
    const seen = new WriteRefusals();
    const at = Date.now();
    seen.note(refused(message));
    expect(seen.takeoverHoldMs(3500, at + 1000), message).toBeGreaterThan(2000);
  }
  expect(isUnreachable(refused("ASK 3999 127.0.0.1:6381"))).toBe(false);
  expect(isUnreachable(refused("ERR wrong number of arguments"))).toBe(false);
});

it("measures how long Redis refused this process's writes until it took one again (the send bookings' hold)", () => {
  vi.useFakeTimers({ now: 1_000_000 });
  try {
    const seen = new WriteRefusals();
    expect(seen.unsettledMs()).toBeUndefined();
    // One slot in migration is not Redis refusing writes.
    seen.note(refused("TRYAGAIN Multiple keys request during rehashing of slot"));
    expect(seen.unsettledMs()).toBeUndefined();
    seen.note(refused("MISCONF Redis is configured to save RDB snapshots"));
    vi.advanceTimersByTime(2500);
    seen.note(refused("MISCONF Redis is configured to save RDB snapshots"));
    expect(seen.unsettledMs()).toBe(2500);
    // A write sent after the last refusal was taken: over. A refusal after it starts anew.
    seen.settled(Date.now());
    expect(seen.unsettledMs()).toBeUndefined();
    vi.advanceTimersByTime(10);
    seen.note(refused("Connection is closed."));
    expect(seen.unsettledMs()).toBe(0);
  } finally {
    vi.useRealTimers();
  }
});
