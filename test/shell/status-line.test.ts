import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startStatusLine } from "../../src/shell/status-line.js";

/** A terminal as far as the status line sees one: everything written, in order. */
function terminal(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

describe("the terminal room's status line", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("shows a running call's progress on one line, updated in place, and erases it at the end", () => {
    const out = terminal(true);
    let detail: string | undefined;
    const stop = startStatusLine(out, 'asking "everything"…', 20, () => detail);
    detail = "step 1 of 3";
    vi.advanceTimersByTime(20);
    detail = "step 2 of 3";
    vi.advanceTimersByTime(20);
    vi.advanceTimersByTime(1000);
    stop();
    const drawn = out.writes.join("");
    expect(drawn).toContain("step 1 of 3");
    expect(drawn).toContain("step 2 of 3");
    // The elapsed time is counted from the start, on the same line.
    expect(drawn).toContain("(1s) · step 2 of 3");
    // Every redraw returns to the line's start: the status never scrolls the conversation.
    expect(drawn).not.toContain("\n");
    expect(out.writes.at(-1)).toBe("\r\u001b[2K");
    const writes = out.writes.length;
    vi.advanceTimersByTime(100);
    expect(out.writes).toHaveLength(writes);
  });

  it("writes nothing when the output is not a terminal, so piped output is the conversation only", () => {
    const out = terminal(false);
    const stop = startStatusLine(out, "asking", 10, () => "step 1");
    vi.advanceTimersByTime(40);
    stop();
    expect(out.writes).toEqual([]);
  });
});
