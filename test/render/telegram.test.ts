import { describe, expect, it } from "vitest";
import type { Block, Reply } from "../../src/core/reply.js";
import type { TelegramMessage } from "../../src/render/telegram.js";
import { renderMatrix } from "../../src/render/matrix.js";
import { htmlToPlainText } from "../../src/render/html.js";
import {
  renderTelegram,
  RESEND_NOTE,
  RESEND_NOTE_BEFORE,
  TELEGRAM_TEXT_LIMIT,
  withResendNote,
} from "../../src/render/telegram.js";
import { parseTelegramHtml } from "../support/telegram-html.js";
import { expectCovers, parseHtml } from "./helpers.js";

/** Everything Telegram's HTML or Markdown could interpret, which must show literally. */
const VERBATIM = "<b>x</b> & *y* _z_ `t` &amp;\nline2";

function answer(fields: Partial<Extract<Block, { type: "answer" }>> = {}): Block {
  return { type: "answer", ok: true, answer: "Answer", items: [], ...fields };
}

function reply(blocks: Block[], labels: string[] = []): Reply {
  return { blocks, options: labels.map((label, i) => ({ token: `tok${i + 1}`, label })) };
}

/** Parsed text of each message, checking every one is well-formed and within the limit. */
function parsedParts(messages: readonly TelegramMessage[]): string[] {
  return messages.map(({ html }) => {
    const text = parseHtml(html);
    // Telegram's own parse (the stand-in's model of it) shows the same text.
    expect(parseTelegramHtml(html)).toMatchObject({ ok: true, text });
    expect(text.length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
    return text;
  });
}

describe("renderTelegram", () => {
  it("shows answer, caveat, text, code and listed labels character for character", () => {
    const labels = Array.from({ length: 9 }, (_, i) => `${VERBATIM} ${i + 1}`);
    const messages = renderTelegram(
      reply(
        [
          answer({ answer: VERBATIM, caveat: VERBATIM }),
          { type: "text", text: VERBATIM },
          { type: "code", text: VERBATIM },
        ],
        labels,
      ),
    );
    expect(messages).toHaveLength(1);
    const listed = labels.map((label, i) => `${i + 1}. ${label}`).join("\n");
    expect(parseHtml(messages[0]!.html)).toBe(
      `${VERBATIM}\n⚠️ Caveat\n${VERBATIM}\n\n${VERBATIM}\n\n${VERBATIM}\n\n${listed}\n` +
        "Press a button or reply with a number to choose.",
    );
    expect(messages[0]!.html).toContain("&lt;b&gt;x&lt;/b&gt; &amp; *y* _z_ `t` &amp;amp;\nline2");
  });

  it("links only http and https urls, with the url escaped in the attribute", () => {
    const items = [
      { id: "js", url: "javascript:alert(1)" },
      { id: "ftp", url: "ftp://x" },
      { id: "data", url: "data:text/html,<script>alert(1)</script>" },
      { id: "bad", url: "not a url" },
      { id: "none", url: null },
      { id: "missing" },
      { id: "web", url: 'https://ex.example/a?x=1&y="2"' },
      { id: "<id>", url: "HTTP://ex.example/b" },
    ];
    const [message] = renderTelegram(reply([answer({ items })]));
    expect(message!.html).not.toMatch(/javascript|ftp:|data:|not a url/);
    expect(message!.html.match(/<a /g)).toHaveLength(2);
    expect(message!.html).toContain('<a href="https://ex.example/a?x=1&amp;y=%222%22">web</a>');
    expect(message!.html).toContain('<a href="http://ex.example/b">&lt;id&gt;</a>');
    expect(parseHtml(message!.html)).toBe(`Answer\n${items.map((item) => `• ${item.id}`).join("\n")}`);
  });

  it("splits a 10,000-character caveat into well-formed messages, buttons on the last", () => {
    const caveat = Array.from({ length: 200 }, (_, i) => `line ${i}: ${"some words ".repeat(5)}`).join("\n");
    expect(caveat.length).toBeGreaterThan(10_000);
    const messages = renderTelegram(reply([answer({ caveat })], ["Yes", "No"]));
    expect(messages.length).toBeGreaterThanOrEqual(3);
    expectCovers(`Answer\n⚠️ Caveat\n${caveat}`, parsedParts(messages));
    // The quote is closed at the end of each part and opened again at the start of the next.
    for (const { html } of messages.slice(1)) expect(html.startsWith("<blockquote>")).toBe(true);
    expect(messages.slice(0, -1).every((m) => m.keyboard === undefined)).toBe(true);
    expect(messages.at(-1)!.keyboard).toEqual([
      [{ text: "1. Yes", data: "tok1" }],
      [{ text: "2. No", data: "tok2" }],
    ]);
  });

  it("splits one over-long line at words, and a word at graphemes", () => {
    const words = "word ".repeat(2000).trim();
    const unbroken = "x".repeat(9000);
    for (const text of [words, unbroken]) {
      const messages = renderTelegram(reply([{ type: "code", text }]));
      expect(messages).toHaveLength(3);
      expectCovers(text, parsedParts(messages));
      for (const { html } of messages) expect(html).toMatch(/^<pre>[^<]*<\/pre>$/);
    }
  });

  it("never splits inside a ZWJ emoji or a combining sequence", () => {
    // The caveat line starts a message, and the limit ends inside the cluster.
    for (const [cluster, before] of [
      ["👩‍👩‍👧", TELEGRAM_TEXT_LIMIT - 2],
      ["e\u0301", TELEGRAM_TEXT_LIMIT - 1],
      ["🇫🇷", TELEGRAM_TEXT_LIMIT - 1],
      ["1️⃣", TELEGRAM_TEXT_LIMIT - 2],
    ] as const) {
      const caveat = "x".repeat(before) + cluster + "y";
      const parts = parsedParts(renderTelegram(reply([answer({ caveat })])));
      expectCovers(`Answer\n⚠️ Caveat\n${caveat}`, parts);
      expect(parts.slice(1)).toEqual(["x".repeat(before), `${cluster}y`]);
    }
  });

  it("keeps fitting options as numbered buttons without listing them", () => {
    const [message] = renderTelegram(reply([answer()], ["Show <logs>", "Retry"]));
    expect(parseHtml(message!.html)).toBe("Answer");
    expect(message!.keyboard).toEqual([
      [{ text: "1. Show <logs>", data: "tok1" }],
      [{ text: "2. Retry", data: "tok2" }],
    ]);
  });

  it("lists every option in full when there are more than eight", () => {
    const labels = Array.from({ length: 10 }, (_, i) => `option ${i + 1}`);
    const [message] = renderTelegram(reply([answer()], labels));
    expect(parseHtml(message!.html)).toBe(
      `Answer\n\n${labels.map((l, i) => `${i + 1}. ${l}`).join("\n")}\nPress a button or reply with a number to choose.`,
    );
    expect(message!.keyboard!.map(([button]) => button!.text)).toEqual(
      labels.map((l, i) => `${i + 1}. ${l}`),
    );
  });

  it("lists a label too long for a button in full and shortens its button between graphemes", () => {
    const long = "a".repeat(61) + "👩‍👩‍👧" + " and more text after the cut";
    const [message] = renderTelegram(reply([answer()], [long, "two\nlines", "short"]));
    const text = parseHtml(message!.html);
    expect(text).toContain(`1. ${long}\n2. two\nlines\n3. short\n`);
    const buttons = message!.keyboard!.map(([button]) => button!.text);
    expect(buttons).toEqual([`1. ${"a".repeat(61)}…`, "2. two…", "3. short"]);
  });

  it("refuses option tokens longer than 64 bytes of callback data", () => {
    const long: Reply = { blocks: [answer()], options: [{ token: "€".repeat(22), label: "x" }] };
    expect(() => renderTelegram(long)).toThrow(RangeError);
    const fits: Reply = { blocks: [answer()], options: [{ token: "é".repeat(32), label: "x" }] };
    expect(renderTelegram(fits)[0]!.keyboard).toEqual([[{ text: "1. x", data: "é".repeat(32) }]]);
  });

  it("puts a long option list after a long caveat, buttons on the last message only", () => {
    const caveat = "c".repeat(5000);
    const labels = Array.from({ length: 12 }, (_, i) => `choice ${i + 1}`);
    const messages = renderTelegram(reply([answer({ caveat })], labels));
    const parts = parsedParts(messages);
    expect(parts.at(-1)).toContain("12. choice 12");
    expect(messages.filter((m) => m.keyboard)).toEqual([messages.at(-1)]);
  });

  it("sends a visible line instead of an empty message", () => {
    expect(renderTelegram(reply([answer({ answer: "" })]))).toEqual([
      { html: "(the agent's answer is empty)" },
    ]);
    expect(renderTelegram(reply([answer({ answer: " \n " })]))).toEqual([{ html: "(empty reply)" }]);
  });

  it("gives back every character as plain text when the markup must go (tags removed, entities decoded)", () => {
    const html = '<b>a</b>&amp;<a href="https://x.example/?a&amp;b">😀</a>&lt;&#33;&#x21;';
    expect(htmlToPlainText(html)).toBe("a&😀<!!");
    expect(htmlToPlainText(html)).toBe((parseTelegramHtml(html) as { text: string }).text);
    for (const messages of [renderTelegram(reply([answer({ answer: VERBATIM, caveat: VERBATIM })]))]) {
      for (const { html: part } of messages) expect(htmlToPlainText(part)).toBe(parseHtml(part));
    }
  });

  it("renders a representative reply", () => {
    const messages = renderTelegram({
      blocks: [
        answer({
          answer: "Found <2> runs & *one* failed",
          items: [
            { id: "run-1", url: "https://ci.example/runs/1?a=1&b=2" },
            { id: "run-2", url: "javascript:alert(1)" },
          ],
          caveat: "Data may be stale.\nLast sync 10:00.",
        }),
        { type: "code", text: "if (a < b) {}" },
      ],
      options: [
        { token: "t1", label: "Show logs" },
        { token: "t2", label: "Retry" },
      ],
    });
    expect(messages).toMatchInlineSnapshot(`
      [
        {
          "html": "Found &lt;2&gt; runs &amp; *one* failed
      • <a href="https://ci.example/runs/1?a=1&amp;b=2">run-1</a>
      • run-2
      <blockquote>⚠️ Caveat
      Data may be stale.
      Last sync 10:00.</blockquote>

      <pre>if (a &lt; b) {}</pre>",
          "keyboard": [
            [
              {
                "data": "t1",
                "text": "1. Show logs",
              },
            ],
            [
              {
                "data": "t2",
                "text": "2. Retry",
              },
            ],
          ],
        },
      ]
    `);
  });
});

describe("blank parts", () => {
  it("never sends a part that is only whitespace, on Telegram or Matrix", () => {
    const blank = reply([answer({ answer: `first\n${" ".repeat(20_000)}\nlast` })]);
    const telegram = renderTelegram(blank);
    expect(telegram.length).toBeGreaterThan(1);
    for (const m of telegram) expect(parseHtml(m.html).trim()).not.toBe("");
    expect(parseHtml(telegram[0]!.html).startsWith("first")).toBe(true);
    expect(parseHtml(telegram.at(-1)!.html).trimEnd().endsWith("last")).toBe(true);
    for (const m of renderMatrix({ ...blank, blocks: [answer({ answer: `a\n${" ".repeat(40_000)}\nb` })] })) {
      expect(m.body.trim()).not.toBe("");
    }
  });
});

describe("withResendNote", () => {
  const options = ["yes", "no"];

  it("puts the note below a part sent again, the part's text and buttons unchanged", () => {
    const [part] = renderTelegram(reply([answer({ answer: VERBATIM })], options));
    const noted = withResendNote(part!);
    expect(noted).toHaveLength(1);
    const [text] = parsedParts(noted);
    expect(text).toBe(`${parsedParts([part!])[0]}\n\n${RESEND_NOTE}`);
    expect(noted[0]!.keyboard).toEqual(part!.keyboard);
  });

  it("sends the note alone before a part too long to carry it, so the part stays whole with its buttons", () => {
    const parts = renderTelegram(reply([answer({ answer: "word ".repeat(2000) })], options));
    const full = parts[0]!;
    expect(htmlToPlainText(full.html).length + RESEND_NOTE.length + 2).toBeGreaterThan(TELEGRAM_TEXT_LIMIT);
    const noted = withResendNote(full);
    expect(noted).toHaveLength(2);
    expect(noted[1]).toEqual(full);
    const [note] = parsedParts(noted);
    expect(note).toBe(RESEND_NOTE_BEFORE);
    expect(noted[0]!.keyboard).toBeUndefined();
    // The last part (with the buttons) fits its note below.
    const last = withResendNote(parts.at(-1)!);
    expect(last).toHaveLength(1);
    expect(last[0]!.keyboard).toEqual(parts.at(-1)!.keyboard);
  });

  it("keeps a part that ends inside a code block well-formed, the note outside it", () => {
    const [part] = renderTelegram(reply([{ type: "code", text: VERBATIM }]));
    const [text] = parsedParts(withResendNote(part!));
    expect(text!.endsWith(`\n\n${RESEND_NOTE}`)).toBe(true);
    expect(withResendNote(part!)[0]!.html).toMatch(/<\/pre>\n\n<i>[^<]+<\/i>$/);
  });
});
