import { describe, expect, it } from "vitest";
import { startStatusLine } from "../../src/shell/status-line.js";

/** A terminal as far as the status line sees one: everything written, in order. */
function terminal(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (text: string) => writes.push(text) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the terminal room's status line", () => {
  it("shows a running call's progress on one line, updated in place, and erases it at the end", async () => {
    const out = terminal(true);
    let detail: string | undefined;
    const stop = startStatusLine(out, 'asking "everything"…', 20, () => detail);
    detail = "step 1 of 3";
    await sleep(60);
    detail = "step 2 of 3";
    await sleep(60);
    stop();
    const drawn = out.writes.join("");
    expect(drawn).toContain("step 1 of 3");
    expect(drawn).toContain("step 2 of 3");
    // Every redraw returns to the line's start: the status never scrolls the conversation.
    expect(drawn).not.toContain("\n");
    expect(out.writes.at(-1)).toBe("\r\u001b[2K");
  });

  it("writes nothing when the output is not a terminal, so piped output is the conversation only", async () => {
    const out = terminal(false);
    const stop = startStatusLine(out, "asking", 10, () => "step 1");
    await sleep(40);
    stop();
    expect(out.writes).toEqual([]);
  });
});
