import type { Reply } from "../core/reply.js";
import { buildDoc } from "./doc.js";
import type { HtmlDialect } from "./html.js";
import { htmlOf } from "./html.js";
import { plainOf } from "./plain.js";
import { splitToFit, withoutBlankParts } from "./split.js";

/** One Matrix message: `body` plain text, `formattedBody` in `org.matrix.custom.html`. */
export interface MatrixMessage {
  body: string;
  formattedBody: string;
}

/** Keycap emoji for options 1 to 10, in order, as the bot pre-places them as reactions. */
export const KEYCAPS = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟"] as const;

/**
 * Most UTF-8 bytes of `body`, and of `formattedBody`, in one message: both together, with
 * the event's JSON around them, stay well under Matrix's 64 KiB event limit.
 */
export const MATRIX_PART_BYTES = 16_000;

const MATRIX_HTML: HtmlDialect = { lineBreak: "<br>", codeOpen: "<pre><code>", codeClose: "</code></pre>" };
/** Clients send keycaps with or without the emoji presentation selector. */
const VARIATION_SELECTOR = /\uFE0F/g;

/** The option number a keycap reaction stands for (with or without U+FE0F), if it is one. */
export function keycapNumber(emoji: string): number | undefined {
  const bare = emoji.replace(VARIATION_SELECTOR, "");
  const index = KEYCAPS.findIndex((keycap) => keycap.replace(VARIATION_SELECTOR, "") === bare);
  return index === -1 ? undefined : index + 1;
}

/**
 * Renders a reply as Matrix messages: a plain `body` as the shell shows it and the same
 * content in escaped HTML, split at lines (then words, then graphemes) so that each stays
 * within MATRIX_PART_BYTES. Options are numbered lines with the keycap a reaction uses
 * (`1️⃣ label`; past the keycaps `11. label`), at the end of the last message.
 */
export function renderMatrix(reply: Reply): MatrixMessage[] {
  const tail = reply.options.map((option, i) => `${KEYCAPS[i] ?? `${i + 1}.`} ${option.label}`);
  if (tail.length > 0) tail.push("React with a number, or reply with it, to choose.");
  const doc = buildDoc(reply.blocks, tail);
  const render = (start: number, end: number): MatrixMessage => ({
    body: plainOf(doc, start, end),
    formattedBody: withoutBreaksAtBlocks(htmlOf(doc, start, end, MATRIX_HTML)),
  });
  const parts = withoutBlankParts(
    doc.text,
    splitToFit(doc.text, MATRIX_PART_BYTES, (start, end) => {
      const { body, formattedBody } = render(start, end);
      return Math.max(utf8Length(body), utf8Length(formattedBody));
    }),
  );
  return parts.map(({ start, end }) => render(start, end));
}

/**
 * Drops the line break just after a quote or code block and, unless one was just dropped
 * there, the one just before: HTML puts a block on lines of its own already, so that break
 * would show as an extra blank line.
 */
function withoutBreaksAtBlocks(html: string): string {
  return html
    .replace(/(<\/blockquote>|<\/code><\/pre>)<br>/g, "$1")
    .replace(/(?<!<\/blockquote>|<\/code><\/pre>)<br>(<blockquote>|<pre><code>)/g, "$1");
}

/** UTF-8 length of a string, counted without encoding it. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    // A surrogate pair is one code point of 4 bytes; a lone surrogate is encoded as U+FFFD, 3 bytes.
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
