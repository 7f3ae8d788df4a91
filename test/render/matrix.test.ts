import { describe, expect, it } from "vitest";
import type { Block, Reply } from "../../src/core/reply.js";
import type { MatrixMessage } from "../../src/render/matrix.js";
import { KEYCAPS, keycapNumber, MATRIX_PART_BYTES, renderMatrix } from "../../src/render/matrix.js";
import { expectCovers, parseHtml, random, trickyText } from "./helpers.js";

const VERBATIM = "<b>x</b> & *y* _z_ `t` &amp;\nline2";
const bytes = (text: string): number => new TextEncoder().encode(text).length;

function answer(fields: Partial<Extract<Block, { type: "answer" }>> = {}): Block {
  return { type: "answer", ok: true, answer: "Answer", items: [], ...fields };
}

function reply(blocks: Block[], labels: string[] = []): Reply {
  return { blocks, options: labels.map((label, i) => ({ token: `tok${i + 1}`, label })) };
}

/** Checks every part is within the byte limit and its HTML well-formed. */
function checkParts(messages: readonly MatrixMessage[]): void {
  for (const { body, formattedBody } of messages) {
    expect(bytes(body)).toBeLessThanOrEqual(MATRIX_PART_BYTES);
    expect(bytes(formattedBody)).toBeLessThanOrEqual(MATRIX_PART_BYTES);
    parseHtml(formattedBody);
  }
}

describe("keycaps", () => {
  it("stands for options 1 to 10, with or without the variation selector", () => {
    expect(KEYCAPS).toHaveLength(10);
    expect(KEYCAPS.map(keycapNumber)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(keycapNumber("1\u20e3")).toBe(1);
    expect(keycapNumber("9\ufe0f\u20e3")).toBe(9);
    expect(keycapNumber("🔟")).toBe(10);
    for (const other of ["0️⃣", "#️⃣", "1", "👍", "", "1️⃣1️⃣"]) expect(keycapNumber(other)).toBeUndefined();
  });
});

describe("renderMatrix", () => {
  it("shows everything verbatim in body and, escaped, in formatted_body", () => {
    const [message] = renderMatrix(
      reply([answer({ answer: VERBATIM, caveat: VERBATIM }), { type: "code", text: VERBATIM }], [VERBATIM]),
    );
    expect(message!.body).toBe(
      `${VERBATIM}\n│ ⚠️ Caveat\n│ ${VERBATIM.replace("\n", "\n│ ")}\n\n\`\`\`\n${VERBATIM}\n\`\`\`\n\n` +
        `1️⃣ ${VERBATIM}\nReact with a number, or reply with it, to choose.`,
    );
    const escaped = "&lt;b&gt;x&lt;/b&gt; &amp; *y* _z_ `t` &amp;amp;";
    expect(message!.formattedBody).toBe(
      `${escaped}<br>line2<blockquote>⚠️ Caveat<br>${escaped}<br>line2</blockquote><br>` +
        `<pre><code>${escaped}\nline2</code></pre><br>1️⃣ ${escaped}<br>line2<br>` +
        "React with a number, or reply with it, to choose.",
    );
    expect(parseHtml(message!.formattedBody)).toContain(`⚠️ Caveat\n${VERBATIM}`);
  });

  it("links only http and https urls; the body shows the url after the id", () => {
    const items = [
      { id: "js", url: "javascript:alert(1)" },
      { id: "ftp", url: "ftp://x" },
      { id: "none", url: null },
      { id: "web", url: "https://ex.example/a?x=1&y=2" },
    ];
    const [message] = renderMatrix(reply([answer({ items })]));
    expect(message!.body).toBe("Answer\n• js\n• ftp\n• none\n• web  https://ex.example/a?x=1&y=2");
    expect(message!.formattedBody).toBe(
      'Answer<br>• js<br>• ftp<br>• none<br>• <a href="https://ex.example/a?x=1&amp;y=2">web</a>',
    );
  });

  it("numbers options with keycaps up to ten, then with plain numbers", () => {
    const labels = Array.from({ length: 12 }, (_, i) => `option ${i + 1}`);
    const [message] = renderMatrix(reply([answer()], labels));
    const lines = message!.body.split("\n");
    expect(lines.slice(2, 14)).toEqual([
      ...KEYCAPS.map((k, i) => `${k} option ${i + 1}`),
      "11. option 11",
      "12. option 12",
    ]);
  });

  it("splits a long code block under the byte limit, nothing cut, each part fenced", () => {
    const next = random(7);
    const code = Array.from({ length: 3000 }, () => trickyText(next, 30)).join("\n");
    const messages = renderMatrix(reply([{ type: "code", text: code }]));
    expect(messages.length).toBeGreaterThan(3);
    checkParts(messages);
    expectCovers(
      code,
      messages.map((m) => m.formattedBody.replace(/^<pre><code>|<\/code><\/pre>$/g, "")).map(parseHtml),
    );
    expectCovers(
      code,
      messages.map((m) => {
        expect(m.body).toMatch(/^```\n[^]*\n```$/);
        return m.body.slice(4, -4);
      }),
    );
  });

  it("splits a long caveat with the quote reopened and options at the end of the last part", () => {
    const caveat = Array.from({ length: 2000 }, (_, i) => `caveat line ${i} <&>`).join("\n");
    const messages = renderMatrix(reply([answer({ caveat })], ["Yes", "No"]));
    expect(messages.length).toBeGreaterThan(1);
    checkParts(messages);
    for (const { body, formattedBody } of messages.slice(1)) {
      expect(formattedBody.startsWith("<blockquote>")).toBe(true);
      expect(body.startsWith("│ caveat line")).toBe(true);
    }
    expect(
      messages.at(-1)!.body.endsWith("1️⃣ Yes\n2️⃣ No\nReact with a number, or reply with it, to choose."),
    ).toBe(true);
    const text = messages.map((m) =>
      parseHtml(m.formattedBody.replace(/<\/blockquote><br>.*$/, "</blockquote>")),
    );
    // No <br> before the quote: HTML puts a block on its own line.
    expectCovers(`Answer⚠️ Caveat\n${caveat}`, text);
  });

  it("never splits inside a grapheme cluster", () => {
    // The HTML's content may take the limit less its tags; the family (18 bytes) would cross that.
    const room = MATRIX_PART_BYTES - "<pre><code></code></pre>".length;
    const family = "👩‍👩‍👧";
    const code = "x".repeat(room - 10) + family + "y";
    const messages = renderMatrix(reply([{ type: "code", text: code }]));
    checkParts(messages);
    expect(messages.map((m) => parseHtml(m.formattedBody))).toEqual(["x".repeat(room - 10), `${family}y`]);
  });

  it("renders a representative reply", () => {
    const messages = renderMatrix({
      blocks: [
        answer({
          answer: "Found <2> runs & *one* failed",
          items: [
            { id: "run-1", url: "https://ci.example/runs/1?a=1&b=2" },
            { id: "run-2", url: "ftp://ci.example/2" },
          ],
          caveat: "Data may be stale.\nLast sync 10:00.",
        }),
        { type: "text", text: "Two more runs are queued." },
      ],
      options: [
        { token: "t1", label: "Show logs" },
        { token: "t2", label: "Retry" },
      ],
    });
    expect(messages).toMatchInlineSnapshot(`
      [
        {
          "body": "Found <2> runs & *one* failed
      • run-1  https://ci.example/runs/1?a=1&b=2
      • run-2
      │ ⚠️ Caveat
      │ Data may be stale.
      │ Last sync 10:00.

      Two more runs are queued.

      1️⃣ Show logs
      2️⃣ Retry
      React with a number, or reply with it, to choose.",
          "formattedBody": "Found &lt;2&gt; runs &amp; *one* failed<br>• <a href="https://ci.example/runs/1?a=1&amp;b=2">run-1</a><br>• run-2<blockquote>⚠️ Caveat<br>Data may be stale.<br>Last sync 10:00.</blockquote><br>Two more runs are queued.<br><br>1️⃣ Show logs<br>2️⃣ Retry<br>React with a number, or reply with it, to choose.",
        },
      ]
    `);
  });
});
