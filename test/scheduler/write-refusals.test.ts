import { expect, it } from "vitest";
import { isWriteRefusal, takeoverGraceMs, WriteRefusals } from "../../src/scheduler/write-refusals.js";

const refused = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

it("holds takeovers back for a grace after the last write Redis refused, and not after other failures", () => {
  const seen = new WriteRefusals();
  const grace = takeoverGraceMs(10_000);
  expect(grace).toBe(3500);
  seen.note(refused("ECONNRESET"));
  seen.note(refused("NOREPLICAS Not enough good replicas to write."));
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
