import { describe, expect, it } from "vitest";
import { checkHookSignature, HOOK_WINDOW_MS, signHook } from "../../src/proactive/hook-signature.js";

// The pure signature check, with the clock given: the window's edges to the second.

const SECRET = "hook-secret-0123456789";
const body = Buffer.from('{"pipeline":"deploy-42"}');
const NOW_S = 1_800_000_000;

function check(timestampS: number, nowMs = NOW_S * 1000, signWith = SECRET): string | undefined {
  const timestamp = String(timestampS);
  return checkHookSignature(SECRET, timestamp, signHook(signWith, timestamp, body), body, nowMs);
}

describe("checkHookSignature", () => {
  it("takes a timestamp up to five minutes either side of the clock and refuses one a second past it", () => {
    const window = HOOK_WINDOW_MS / 1000;
    expect(check(NOW_S)).toBeUndefined();
    expect(check(NOW_S - window)).toBeUndefined();
    expect(check(NOW_S + window)).toBeUndefined();
    expect(check(NOW_S - window - 1)).toBe("stale");
    expect(check(NOW_S + window + 1)).toBe("stale");
    // The clock's milliseconds count: 300.5 s behind is outside.
    expect(check(NOW_S - window, NOW_S * 1000 + 500)).toBe("stale");
  });

  it("says bad_signature before looking at the clock, and missing without both headers", () => {
    expect(check(NOW_S - 3600, NOW_S * 1000, "not-the-secret")).toBe("bad_signature");
    expect(checkHookSignature(SECRET, undefined, "sha256=00", body, NOW_S * 1000)).toBe("missing");
    expect(checkHookSignature(SECRET, String(NOW_S), undefined, body, NOW_S * 1000)).toBe("missing");
  });

  it("refuses a timestamp that is not whole seconds, even when signed", () => {
    const timestamp = `${NOW_S}.5`;
    expect(checkHookSignature(SECRET, timestamp, signHook(SECRET, timestamp, body), body, NOW_S * 1000)).toBe(
      "stale",
    );
  });
});
