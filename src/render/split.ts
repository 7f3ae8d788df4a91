/**
 * Where one part of a split text lies: `text.slice(start, end)`. What lies between a part's
 * `end` and the next part's `start` (or the end of the text, after the last part) is the
 * separator the split fell on: a line break, one space or tab, or nothing.
 */
export interface Part {
  start: number;
  end: number;
}

/**
 * Drops parts that would show only whitespace (a run of spaces cut from a long line, say):
 * platforms refuse or blank such a message, and whitespace at a message's edge is not shown
 * anyway. A text that is all whitespace keeps its parts; the renderers never build one.
 */
export function withoutBlankParts(text: string, parts: Part[]): Part[] {
  const visible = parts.filter(({ start, end }) => text.slice(start, end).trim() !== "");
  return visible.length > 0 ? visible : parts;
}

/** A possible end of the current part, and where the next part starts after it. */
interface Cut {
  end: number;
  next: number;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * Splits `text` into non-empty parts whose `measure(start, end)` is at most `limit`: at line
 * breaks first, at a space or tab only when one line is too long, between grapheme clusters
 * only when one word is too long. `measure` must grow with the part and count at least one
 * per UTF-16 code unit, which bounds the search to `limit` code units per part.
 */
export function splitToFit(
  text: string,
  limit: number,
  measure: (start: number, end: number) => number,
): Part[] {
  if (text === "") return [{ start: 0, end: 0 }];
  const lines = lineCuts(text);
  const parts: Part[] = [];
  let start = 0;
  do {
    const fits = (end: number): boolean => measure(start, end) <= limit;
    const first = firstEndingAfter(lines, start);
    const inWindow = lines.slice(first, firstEndingAfter(lines, start + limit));
    const cut =
      lastFitting(inWindow, (line) => fits(line.end)) ??
      cutInsideLine(text, start, Math.min(lines[first]?.end ?? text.length, start + limit), fits);
    parts.push({ start, end: cut.end });
    start = cut.next;
  } while (start < text.length);
  return parts;
}

/**
 * Cuts the line that starts a part and does not fit whole: at the last space that lets the
 * part fit, else between clusters, else, for one cluster longer than the whole limit (e.g. a
 * letter with thousands of combining marks), between code points, the only way left to show
 * it at all.
 */
function cutInsideLine(text: string, start: number, window: number, fits: (end: number) => boolean): Cut {
  // The largest end that fits, by binary search over code units; every earlier end fits too.
  let lo = start;
  let hi = window;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  const end = lo;
  for (let at = end; at > start; at--) {
    if ((text[at] === " " || text[at] === "\t") && isBareSpace(text, at)) return { end: at, next: at + 1 };
  }
  const boundary = lastClusterBoundary(text, start, end);
  if (boundary > start) return { end: boundary, next: boundary };
  const codePoint =
    isLowSurrogate(text.charCodeAt(end)) && isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
  if (codePoint === start) throw new RangeError("split limit leaves no room for one character");
  return { end: codePoint, next: codePoint };
}

/**
 * Whether the space at `at` is a cluster of its own: nothing before it holds on to it (a
 * prepended mark) and nothing after it attaches to it (a combining mark, a joiner). Those
 * rules look only at the code points on either side, so three code points decide it.
 */
function isBareSpace(text: string, at: number): boolean {
  const before = String.fromCodePoint(codePointBefore(text, at));
  const after = at + 1 < text.length ? String.fromCodePoint(text.codePointAt(at + 1)!) : "";
  return [...graphemes.segment(before + text[at] + after)].some(
    ({ segment, index }) => index === before.length && segment === text[at],
  );
}

/**
 * The last cluster boundary in (start, end], or `start` when one cluster spans it all.
 * Segmenting is slow (and superlinear in the string's length), so it starts at the nearest
 * position that is surely a boundary: between two plain ASCII characters.
 */
function lastClusterBoundary(text: string, start: number, end: number): number {
  let from = end;
  while (from > start && !(isPlainAscii(text.charCodeAt(from - 1)) && isPlainAscii(text.charCodeAt(from))))
    from--;
  if (from === end) return end;
  // A boundary is decided by the code point at it and what precedes it, so the slice takes
  // in the whole code point at `end`.
  let last = from;
  for (const { index } of graphemes.segment(text.slice(from, end + 2))) {
    if (from + index > end) break;
    last = from + index;
  }
  return last;
}

/** Every line break as a cut (a CRLF is one break, never split), then the end of the text. */
function lineCuts(text: string): Cut[] {
  const cuts: Cut[] = [];
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) {
    cuts.push(at > 0 && text[at - 1] === "\r" ? { end: at - 1, next: at + 1 } : { end: at, next: at + 1 });
  }
  cuts.push({ end: text.length, next: text.length });
  return cuts;
}

/** Index of the first cut (sorted by end) that ends after `position`. */
function firstEndingAfter(cuts: readonly Cut[], position: number): number {
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cuts[mid]!.end > position) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The last of `cuts` that fits, by binary search: a cut fits only if every earlier one does. */
function lastFitting(cuts: readonly Cut[], fits: (cut: Cut) => boolean): Cut | undefined {
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (fits(cuts[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? undefined : cuts[lo - 1];
}

function codePointBefore(text: string, at: number): number {
  const low = text.charCodeAt(at - 1);
  return isLowSurrogate(low) && isHighSurrogate(text.charCodeAt(at - 2)) ? text.codePointAt(at - 2)! : low;
}

/** Printable ASCII or a tab: no grapheme rule joins two of these, so a boundary lies between. */
function isPlainAscii(unit: number): boolean {
  return (unit >= 0x20 && unit < 0x7f) || unit === 0x09;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
