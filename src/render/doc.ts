import type { Block } from "../core/reply.js";

/** What a stretch of text sits in: running text, the caveat's quote block, or a monospace block. */
export type Container = "plain" | "quote" | "code";

/** A link target: `url` as the Answer wrote it, `href` the same url normalised for an attribute. */
export interface Link {
  url: string;
  href: string;
}

/** One stretch `text.slice(start, end)` of a Doc with the markup it sits in. */
export interface Span {
  start: number;
  end: number;
  container: Container;
  link?: Link;
}

/**
 * A reply laid out as the exact text a person sees, with spans saying which markup each
 * stretch sits in. Renderers split the text and then mark up each part from the spans, so
 * every part is well-formed on its own and its visible text is a slice of `text`.
 */
export interface Doc {
  text: string;
  spans: Span[];
}

/** One piece of a range of a Doc: the text of one span inside the range. */
export interface Piece {
  text: string;
  span: Span;
  /** Whether the range reaches the span's end, so the piece completes it. */
  ends: boolean;
}

/** Heading line of the caveat's quote block. */
const CAVEAT_HEADING = "⚠️ Caveat";
/** Shown for an Answer whose answer line is empty, so that it is plain nothing was lost. */
export const EMPTY_ANSWER = "(the agent's answer is empty)";
/** Shown instead of a reply with nothing visible: no platform gets an empty message. */
export const EMPTY_REPLY = "(empty reply)";

/**
 * Lays out the blocks, then `tail` (the option lines a platform lists, if any), as one Doc:
 * blocks apart by a blank line; in an answer the answer line, one `• id` line per item and
 * the quoted caveat (headed by CAVEAT_HEADING) one per line. An empty answer line shows
 * EMPTY_ANSWER; other empty parts show nothing and take no line; a Doc with nothing visible
 * shows EMPTY_REPLY.
 */
export function buildDoc(blocks: readonly Block[], tail: readonly string[]): Doc {
  const doc: Doc = { text: "", spans: [] };
  const add = (text: string, container: Container = "plain", link?: Link): void => {
    const start = doc.text.length;
    doc.text += text;
    const last = doc.spans.at(-1);
    // Adjacent plain stretches merge so that range look-ups stay short.
    if (last && container === "plain" && last.container === "plain" && !link && !last.link) {
      last.end = doc.text.length;
    } else {
      doc.spans.push({ start, end: doc.text.length, container, ...(link && { link }) });
    }
  };
  const sections: (() => void)[][] = blocks.map((block) => {
    switch (block.type) {
      case "answer": {
        const lines: (() => void)[] = [];
        lines.push(() => add(block.answer === "" ? EMPTY_ANSWER : block.answer));
        for (const item of block.items) {
          lines.push(() => {
            add("• ");
            add(item.id, "plain", linkOf(item.url));
          });
        }
        const caveat = block.caveat;
        if (caveat) lines.push(() => add(`${CAVEAT_HEADING}\n${caveat}`, "quote"));
        return lines;
      }
      case "text":
        return block.text === "" ? [] : [() => add(block.text)];
      case "code":
        return block.text === "" ? [] : [() => add(block.text, "code")];
    }
  });
  sections.push(tail.map((line) => () => add(line)));
  sections
    .filter((lines) => lines.length > 0)
    .forEach((lines, i) => {
      if (i > 0) add("\n\n");
      lines.forEach((write, j) => {
        if (j > 0) add("\n");
        write();
      });
    });
  if (doc.text.trim() === "")
    return { text: EMPTY_REPLY, spans: [{ start: 0, end: EMPTY_REPLY.length, container: "plain" }] };
  return doc;
}

/** The pieces of `doc.text.slice(start, end)`, in order, one per span it touches. */
export function piecesOf(doc: Doc, start: number, end: number): Piece[] {
  const pieces: Piece[] = [];
  for (let i = firstSpanEndingAfter(doc.spans, start); i < doc.spans.length; i++) {
    const span = doc.spans[i]!;
    if (span.start >= end) break;
    const from = Math.max(start, span.start);
    const to = Math.min(end, span.end);
    if (from < to) pieces.push({ text: doc.text.slice(from, to), span, ends: to === span.end });
  }
  return pieces;
}

/** The url as a link when it is http: or https:; any other url is never made a link. */
function linkOf(url: string | null | undefined): Link | undefined {
  if (!url || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return parsed.protocol === "http:" || parsed.protocol === "https:" ? { url, href: parsed.href } : undefined;
}

function firstSpanEndingAfter(spans: readonly Span[], position: number): number {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (spans[mid]!.end > position) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
