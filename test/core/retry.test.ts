import { describe, expect, it } from "vitest";
import { backoffMs, pause, retry, sleep, StoppedError, type RetryNotice } from "../../src/core/retry.js";

describe("the one retry module", () => {
  it("retries what classify calls transient, with waits doubling up to the longest", async () => {
    const notices: RetryNotice[] = [];
    let calls = 0;
    const result = await retry(
      async (attempt) => {
        calls += 1;
        if (attempt < 4) throw new Error(`fail ${attempt}`);
        return "ok";
      },
      () => "retry",
      { attempts: 5, firstMs: 5, maxMs: 12 },
      { onRetry: (n) => notices.push(n) },
    );
    expect(result).toBe("ok");
    expect(calls).toBe(4);
    expect(notices.map((n) => n.waitMs)).toEqual([5, 10, 12]);
    expect(notices.map((n) => n.attempt)).toEqual([1, 2, 3]);
  });

  it("waits what the other side asked, and rethrows a final error or the last one as it was", async () => {
    const waits: number[] = [];
    const asked = await retry(
      async (attempt) => {
        if (attempt === 1) throw new Error("429");
        return attempt;
      },
      () => ({ afterMs: 7 }),
      { attempts: 3, firstMs: 1000, maxMs: 1000 },
      { onRetry: (n) => waits.push(n.waitMs) },
    );
    expect([asked, waits]).toEqual([2, [7]]);
    const final = new Error("403");
    let calls = 0;
    const refused = retry(
      async () => {
        calls += 1;
        throw final;
      },
      () => "fail",
      { attempts: 5, firstMs: 1, maxMs: 1 },
    );
    await expect(refused).rejects.toBe(final);
    expect(calls).toBe(1);
    const exhausted = retry(
      async (attempt) => {
        throw new Error(`fail ${attempt}`);
      },
      () => "retry",
      { attempts: 3, firstMs: 1, maxMs: 1 },
    );
    await expect(exhausted).rejects.toThrow("fail 3");
  });

  it("stops waiting at once when its signal aborts", async () => {
    const stop = new AbortController();
    const started = Date.now();
    const waiting = retry(
      async () => {
        throw new Error("down");
      },
      () => "retry",
      { attempts: Infinity, firstMs: 60_000, maxMs: 60_000 },
      { signal: stop.signal },
    );
    setTimeout(() => stop.abort(), 20);
    await expect(waiting).rejects.toBeInstanceOf(StoppedError);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(sleep(10, stop.signal)).rejects.toBeInstanceOf(StoppedError);
  });

  it("pauses until its time or its signal, whichever is first, and never rejects", async () => {
    const started = Date.now();
    await pause(20, new AbortController().signal);
    expect(Date.now() - started).toBeGreaterThanOrEqual(19);
    const stop = new AbortController();
    const paused = pause(60_000, stop.signal);
    stop.abort();
    await expect(paused).resolves.toBeUndefined();
    await expect(pause(60_000, stop.signal)).resolves.toBeUndefined();
  });

  it("spreads jittered waits over the upper half of the backoff", () => {
    for (let i = 0; i < 50; i++) {
      const wait = backoffMs({ firstMs: 100, maxMs: 1000, jitter: true }, 2);
      expect(wait).toBeGreaterThanOrEqual(200);
      expect(wait).toBeLessThanOrEqual(400);
    }
    expect(backoffMs({ firstMs: 100, maxMs: 1000 }, 10)).toBe(1000);
  });
});
