import type { Answer } from "../../../src/core/answer.js";

/**
 * What the hostile namespace (`hostile-server.ts`) answers, by question: each case is
 * built to break a renderer or a platform limit. Tests compare what each platform shows
 * against these.
 */

const EMOJI = ["😀", "👩‍👩‍👧", "🇫🇷", "1️⃣", "e\u0301"];

/** 100,000 characters of caveat in lines of varying length. */
function longCaveat(): string {
  const lines: string[] = [];
  let length = 0;
  for (let i = 0; length < 100_000; i++) {
    const line = `caveat line ${i}: ${"word ".repeat(i % 37)}<i>&amp;`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n").slice(0, 100_000);
}

/** The Answer of every hostile case; the question is the case name. */
export const HOSTILE_ANSWERS: Record<string, Answer> = {
  markup: {
    ok: true,
    answer:
      '<b>bold</b> *star* _under_ `tick` &amp; &lt; <a href="https://evil.example">x</a> </blockquote></pre>',
    items: [{ id: "<script>alert(1)</script>", url: "https://ex.example/?q=<b>&amp;" }],
    caveat: "</blockquote><b>not bold</b> ```fence``` <tg-spoiler>s</tg-spoiler>",
    options: ["<i>one</i>", "&amp; two"],
  },
  caveat: { ok: true, answer: "A long caveat follows.", items: [], caveat: longCaveat(), options: [] },
  line: { ok: true, answer: `L${"x".repeat(19_998)}L`, items: [], caveat: null, options: [] },
  emoji: {
    ok: true,
    answer: "x" + Array.from({ length: 5000 }, (_, i) => EMOJI[i % EMOJI.length]).join(""),
    items: [],
    caveat: null,
    options: [],
  },
  urls: {
    ok: true,
    answer: "Links of every kind.",
    items: [
      { id: "js", url: "javascript:alert(1)" },
      { id: "tg", url: "tg://resolve?domain=evil" },
      { id: "data", url: "data:text/html,<script>alert(1)</script>" },
      { id: "quote", url: 'https://ex.example/"onmouseover="alert(1)' },
      { id: "apostrophe", url: "https://ex.example/a'b<c>d" },
      { id: "plain", url: "https://ex.example/ok" },
    ],
    caveat: null,
    options: [],
  },
  many: {
    ok: false,
    answer: "Which of these 1000?",
    items: [],
    caveat: null,
    options: Array.from({ length: 1000 }, (_, i) => `option ${i + 1}`),
  },
  longopts: {
    ok: false,
    answer: "Which long option?",
    items: [],
    caveat: null,
    options: ["001", "002", "003"].map((end) => `${"y".repeat(297)}${end}`),
  },
  slash: {
    ok: false,
    answer: "Pick a command-looking option.",
    items: [],
    caveat: null,
    options: ["/reset", "/help"],
  },
  empty: { ok: true, answer: "", items: [], caveat: null, options: [] },
  control: {
    ok: true,
    answer: "clip\u001b]52;c;aGVsbG8=\u0007 hidden\u001b[8m secret\u001b[0m \u009b31m c1 \r overwrite",
    items: [],
    caveat: "bell\u0007 tab\tok",
    options: [],
  },
};

/** The text of the `error` case's `isError` result. */
export const HOSTILE_ERROR_TEXT = "boom <b>&amp; not markup</b>";

/** The answer line of any question that is not a case: the question exactly as received. */
export function echoAnswer(question: string): Answer {
  return { ok: true, answer: `you said: ${JSON.stringify(question)}`, items: [], caveat: null, options: [] };
}
