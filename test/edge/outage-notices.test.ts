import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { NOTICE_WAIT_MS, OutageNotices, type OutageNoticeOptions } from "../../src/edge/outage-notices.js";

/**
 * The told-once policy both adapters use: who is told, when, how often, and how long a
 * told room's message waits before it is queued. Fake clocks; the sending is a record.
 */
const OPTIONS: OutageNoticeOptions = { afterMs: 10_000, paceMs: 100, perOutage: 3, roomEveryMs: 600_000 };
let sent: { room: string; at: number }[];
let notices: OutageNotices;
const send = (room: string) => async () => {
  sent.push({ room, at: Date.now() });
};

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  sent = [];
  notices = new OutageNotices("test", silentLogger(), OPTIONS);
});
afterEach(() => vi.useRealTimers());

describe("outage notices", () => {
  it("tells a room only once its message has waited long enough, and once however often it is refused", async () => {
    const since = notices.refusedSince("event-1");
    vi.advanceTimersByTime(9_999);
    notices.failed("room-a", notices.refusedSince("event-1"), send("room-a"));
    await vi.runAllTimersAsync();
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    for (let i = 0; i < 5; i++) notices.failed("room-a", since, send("room-a"));
    await vi.runAllTimersAsync();
    expect(sent.map((s) => s.room)).toEqual(["room-a"]);
  });

  it("does not tell a room again in a later outage within roomEveryMs, and does after it", async () => {
    notices.failed("room-a", Date.now() - 10_000, send("room-a"));
    await vi.runAllTimersAsync();
    notices.queued();
    vi.advanceTimersByTime(60_000);
    notices.failed("room-a", Date.now() - 10_000, send("room-a"));
    await vi.runAllTimersAsync();
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(600_000);
    notices.queued();
    notices.failed("room-a", Date.now() - 10_000, send("room-a"));
    await vi.runAllTimersAsync();
    expect(sent).toHaveLength(2);
  });

  it("paces notices apart, caps them per outage, and a queued message starts a new outage", async () => {
    const start = Date.now();
    for (const room of ["a", "b", "c", "d", "e"]) notices.failed(room, start - 10_000, send(room));
    await vi.runAllTimersAsync();
    expect(sent.map((s) => s.room)).toEqual(["a", "b", "c"]);
    expect(sent.map((s) => s.at - start)).toEqual([0, 100, 200]);
    notices.queued();
    notices.failed("d", Date.now() - 10_000, send("d"));
    await vi.runAllTimersAsync();
    expect(sent.map((s) => s.room)).toEqual(["a", "b", "c", "d"]);
  });

  it("holds a told room's message while its notice is on its way and until 1.2 s after it was answered, and no other room's", async () => {
    let answer: () => void = () => undefined;
    notices.failed("room-a", Date.now() - 10_000, () => new Promise<void>((resolve) => (answer = resolve)));
    await vi.advanceTimersByTimeAsync(0);
    // A notice may wait for its slot in the send windows for seconds.
    vi.advanceTimersByTime(5_000);
    expect(notices.holdFor("room-a")).toBeGreaterThan(0);
    expect(notices.holdFor("room-b")).toBe(0);
    answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(notices.holdFor("room-a")).toBe(1200);
    vi.advanceTimersByTime(1200);
    expect(notices.holdFor("room-a")).toBe(0);
  });

  it("gives up a notice not answered within NOTICE_WAIT_MS: its request is aborted and the room held no longer", async () => {
    let signal: AbortSignal | undefined;
    notices.failed("room-a", Date.now() - 10_000, (s) => {
      signal = s;
      return new Promise<void>(() => undefined);
    });
    await vi.advanceTimersByTimeAsync(NOTICE_WAIT_MS - 1);
    expect(notices.holdFor("room-a")).toBeGreaterThan(0);
    expect(signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signal?.aborted).toBe(true);
    // As after a failed notice: it may have reached the room, so the answer still keeps its gap.
    expect(notices.holdFor("room-a")).toBe(1200);
  });

  it("remembers a message's first refusal until it is queued", () => {
    const first = notices.refusedSince("event-1");
    vi.advanceTimersByTime(5_000);
    expect(notices.refusedSince("event-1")).toBe(first);
    notices.queued("event-1");
    expect(notices.refusedSince("event-1")).toBe(Date.now());
  });

  it("a notice that fails is not sent again", async () => {
    let tries = 0;
    const failing = async () => {
      tries += 1;
      throw new Error("homeserver down");
    };
    notices.failed("room-a", Date.now() - 10_000, failing);
    await vi.runAllTimersAsync();
    notices.failed("room-a", Date.now() - 10_000, failing);
    await vi.runAllTimersAsync();
    expect(tries).toBe(1);
  });
});
