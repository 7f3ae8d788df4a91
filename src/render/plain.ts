import type { Reply } from "../core/reply.js";
import type { Container, Doc } from "./doc.js";
import { buildDoc, piecesOf } from "./doc.js";

/** Prefix of every line of the caveat, so that where it starts and ends is plain to see. */
const QUOTE_PREFIX = "│ ";
const FENCE = "```";

/**
 * Renders a reply for the terminal shell room as one message (a terminal has no length
 * limit): the answer verbatim, items as `• id  url` (a url that is not http/https is left
 * out, so only the id shows), the caveat in full with every line prefixed `│ `, code
 * (a tool's text) on lines of its own without Markdown fences (a terminal is monospace
 * already, and fences would be copied with the text), options as `1. label` lines and a
 * hint to reply with a number.
 */
export function renderPlain(reply: Reply): string[] {
  const tail = reply.options.map((option, i) => `${i + 1}. ${option.label}`);
  if (tail.length > 0) tail.push("Reply with a number to choose.");
  const doc = buildDoc(reply.blocks, tail);
  return [plainOf(doc, 0, doc.text.length, "")];
}

/**
 * Plain text of `doc.text.slice(start, end)` as the shell shows it: a link's url follows
 * its id, each caveat line is prefixed, and a code block the range cuts is fenced in it
 * (with `fence`, "```" by default as a Matrix body's Markdown has it; "" for none).
 */
export function plainOf(doc: Doc, start: number, end: number, fence = FENCE): string {
  let out = "";
  let inside: Container = "plain";
  for (const { text, span, ends } of piecesOf(doc, start, end)) {
    if (span.container !== inside) {
      if (inside === "code" && fence) out += `\n${fence}`;
      if (span.container === "code" && fence) out += `${fence}\n`;
      if (span.container === "quote") out += QUOTE_PREFIX;
      inside = span.container;
    }
    if (span.container === "quote") out += text.replaceAll("\n", `\n${QUOTE_PREFIX}`);
    else out += span.link && ends ? `${text}  ${span.link.url}` : text;
  }
  return inside === "code" && fence ? `${out}\n${fence}` : out;
}
