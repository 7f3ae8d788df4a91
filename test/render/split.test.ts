import { describe, expect, it } from "vitest";
import type { Part } from "../../src/render/split.js";
import { splitToFit } from "../../src/render/split.js";
import { random, trickyText } from "./helpers.js";

const utf16 = (_text: string) => (start: number, end: number) => end - start;
const utf8 = (text: string) => (start: number, end: number) =>
  new TextEncoder().encode(text.slice(start, end)).length;
const withOverhead = (_text: string) => (start: number, end: number) => end - start + 5;

function graphemeBoundaries(text: string): Set<number> {
  const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
  const bounds = new Set([text.length]);
  for (const { index } of segmenter.segment(text)) bounds.add(index);
  return bounds;
}

function separators(text: string, parts: readonly Part[]): string[] {
  return parts.map((part, i) => text.slice(part.end, parts[i + 1]?.start ?? text.length));
}

/** End of the first line break after `position` (as a cut: CRLF ends at its CR), or the text's end. */
function lineEndAfter(text: string, position: number): number {
  for (let at = text.indexOf("\n", position); at !== -1; at = text.indexOf("\n", at + 1)) {
    const end = text[at - 1] === "\r" ? at - 1 : at;
    if (end > position) return end;
  }
  return text.length;
}

describe("splitToFit", () => {
  const measures = { utf16, utf8, withOverhead };
  for (const [name, measureOf] of Object.entries(measures)) {
    it(`keeps every property over random tricky strings (${name})`, () => {
      for (let seed = 1; seed <= 300; seed++) {
        const next = random(seed);
        const text = trickyText(next, Math.floor(next() * 120));
        // The largest cluster of the alphabet (a ZWJ family) is 18 UTF-8 bytes.
        const limit = 18 + 5 + Math.floor(next() * 40);
        const measure = measureOf(text);
        const parts = splitToFit(text, limit, measure);
        const seps = separators(text, parts);
        const bounds = graphemeBoundaries(text);

        // Nothing is dropped: parts with the separators they were split at give the text.
        expect(parts.map((p, i) => text.slice(p.start, p.end) + seps[i]).join("")).toBe(text);
        for (const [i, part] of parts.entries()) {
          const sep = seps[i]!;
          expect(["", "\n", "\r\n", " ", "\t"]).toContain(sep);
          expect(measure(part.start, part.end)).toBeLessThanOrEqual(limit);
          if (text !== "") expect(part.end).toBeGreaterThan(part.start);
          // No cut inside a cluster, on either side of a dropped separator.
          expect(bounds.has(part.start) && bounds.has(part.end)).toBe(true);
          const next = parts[i + 1];
          if (!next) continue;
          const lineEnd = lineEndAfter(text, part.start);
          if (sep === "\n" || sep === "\r\n") {
            // Whole lines are packed greedily: the next line would not have fitted.
            expect(measure(part.start, lineEndAfter(text, next.start))).toBeGreaterThan(limit);
          } else {
            // A line is cut only when it does not fit whole.
            expect(measure(part.start, lineEnd)).toBeGreaterThan(limit);
          }
          if (sep === "") {
            // A cut between clusters only when no word boundary in the part would do.
            expect(/[ \t](?!\p{M})/u.test(text.slice(part.start + 1, part.end))).toBe(false);
          }
        }
      }
    });
  }

  it("returns one empty part for empty text", () => {
    expect(splitToFit("", 10, utf16(""))).toEqual([{ start: 0, end: 0 }]);
  });

  it("keeps a whole text that fits as one part, trailing break included", () => {
    expect(splitToFit("ab\ncd\n", 10, utf16(""))).toEqual([{ start: 0, end: 6 }]);
  });

  it("packs whole lines, then words, then graphemes", () => {
    const text = "one two\nthree four five\nabcdefghijkl";
    const parts = splitToFit(text, 10, utf16(text)).map((p) => text.slice(p.start, p.end));
    expect(parts).toEqual(["one two", "three four", "five", "abcdefghij", "kl"]);
  });

  it("never cuts a ZWJ emoji or a combining sequence", () => {
    const family = "👩‍👩‍👧";
    const emoji = "aaaaa" + family + "b";
    expect(splitToFit(emoji, 8, utf16(emoji)).map((p) => emoji.slice(p.start, p.end))).toEqual([
      "aaaaa",
      family,
      "b",
    ]);
    const combining = "abcde\u0301f";
    expect(splitToFit(combining, 5, utf16(combining)).map((p) => combining.slice(p.start, p.end))).toEqual([
      "abcd",
      "e\u0301f",
    ]);
    const flags = "🇫🇷🇩🇪🇫🇷";
    expect(splitToFit(flags, 5, utf16(flags)).map((p) => flags.slice(p.start, p.end))).toEqual([
      "🇫🇷",
      "🇩🇪",
      "🇫🇷",
    ]);
  });

  it("does not take a space followed by a combining mark as a word boundary", () => {
    const text = "abc \u0301def";
    const parts = splitToFit(text, 4, utf16(text)).map((p) => text.slice(p.start, p.end));
    // The space and its mark are one cluster: cut before it, never dropped as a separator.
    expect(parts).toEqual(["abc", " \u0301de", "f"]);
  });

  it("cuts one cluster longer than the limit between code points, never inside a pair", () => {
    const zalgo = "e" + "\u0301".repeat(20) + "😀\u0301";
    const parts = splitToFit(zalgo, 5, utf16(zalgo));
    expect(parts.map((p) => zalgo.slice(p.start, p.end)).join("")).toBe(zalgo);
    for (const p of parts) {
      expect(p.end - p.start).toBeLessThanOrEqual(5);
      expect(zalgo.slice(p.start, p.end)).not.toMatch(/[\uD800-\uDBFF]$/);
    }
    expect(zalgo.slice(parts.at(-1)!.start).endsWith("😀\u0301")).toBe(true);
  });

  it("refuses a limit that leaves no room for one character", () => {
    expect(() => splitToFit("😀", 1, utf16("😀"))).toThrow(RangeError);
  });

  it("splits a long single line in time linear in its length", () => {
    const text = "x".repeat(1_000_000);
    const parts = splitToFit(text, 4096, utf16(text));
    expect(parts).toHaveLength(Math.ceil(1_000_000 / 4096));
  });
});
