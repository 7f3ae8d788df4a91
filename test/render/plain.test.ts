import { describe, expect, it } from "vitest";
import type { Reply } from "../../src/core/reply.js";
import { renderPlain } from "../../src/render/plain.js";

const VERBATIM = "<b>x</b> & *y* _z_ `t` &amp;\nline2";

describe("renderPlain", () => {
  it("shows answer, text, code and labels verbatim, code without Markdown fences (a terminal is monospace)", () => {
    const [text] = renderPlain({
      blocks: [
        { type: "answer", ok: false, answer: VERBATIM, items: [] },
        { type: "text", text: VERBATIM },
        { type: "code", text: VERBATIM },
      ],
      options: [{ token: "t", label: VERBATIM }],
    });
    expect(text).toBe(
      `${VERBATIM}\n\n${VERBATIM}\n\n${VERBATIM}\n\n1. ${VERBATIM}\nReply with a number to choose.`,
    );
  });

  it("shows a url only when it is http or https, and the caveat in full with every line marked", () => {
    const caveat = "first\n\nthird " + "long ".repeat(1000);
    const [text] = renderPlain({
      blocks: [
        {
          type: "answer",
          ok: true,
          answer: "Answer",
          items: [
            { id: "js", url: "javascript:alert(1)" },
            { id: "ftp", url: "ftp://x" },
            { id: "web", url: "https://ex.example/a?b=<c>" },
          ],
          caveat,
        },
      ],
      options: [],
    });
    expect(text).toBe(
      `Answer\n• js\n• ftp\n• web  https://ex.example/a?b=<c>\n│ ⚠️ Caveat\n│ first\n│ \n│ third ${"long ".repeat(1000)}`,
    );
  });

  it("returns one message, a visible placeholder for an empty reply", () => {
    expect(renderPlain({ blocks: [], options: [] })).toEqual(["(empty reply)"]);
  });

  it("renders a representative reply", () => {
    const reply: Reply = {
      blocks: [
        {
          type: "answer",
          ok: true,
          answer: "Found <2> runs & *one* failed",
          items: [
            { id: "run-1", url: "https://ci.example/runs/1" },
            { id: "run-2", url: "javascript:alert(1)" },
          ],
          caveat: "Data may be stale.\nLast sync 10:00.",
        },
        { type: "code", text: "if (a < b) {\n  retry();\n}" },
      ],
      options: [
        { token: "t1", label: "Show logs" },
        { token: "t2", label: "Retry" },
      ],
    };
    expect(renderPlain(reply)).toMatchInlineSnapshot(`
      [
        "Found <2> runs & *one* failed
      • run-1  https://ci.example/runs/1
      • run-2
      │ ⚠️ Caveat
      │ Data may be stale.
      │ Last sync 10:00.

      if (a < b) {
        retry();
      }

      1. Show logs
      2. Retry
      Reply with a number to choose.",
      ]
    `);
  });
});
