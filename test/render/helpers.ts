/**
 * A small stand-in for a platform's HTML parser: removes tags (checking that they are
 * known and balanced, as Telegram refuses a message otherwise), turns `<br>` into a line
 * break and decodes entities, giving the text a person sees.
 */
export function parseHtml(html: string): string {
  const stack: string[] = [];
  let text = "";
  for (const token of html.split(/(<[^>]*>)/)) {
    const tag = /^<(\/?)([a-z]+)(?:\s+href="[^"<>]*")?>$/.exec(token);
    if (!token.startsWith("<")) {
      if (/[<>]/.test(token) || /&(?!(?:lt|gt|amp|quot);)/.test(token))
        throw new Error(`unescaped text: ${token}`);
      text += token
        .replaceAll("&lt;", "<")
        .replaceAll("&gt;", ">")
        .replaceAll("&quot;", '"')
        .replaceAll("&amp;", "&");
    } else if (!tag || !["a", "b", "i", "blockquote", "pre", "code", "br"].includes(tag[2]!)) {
      throw new Error(`unknown tag: ${token}`);
    } else if (tag[2] === "br") {
      text += "\n";
    } else if (tag[1] === "/") {
      if (stack.pop() !== tag[2]) throw new Error(`unbalanced ${token} in ${html.slice(0, 200)}`);
    } else {
      stack.push(tag[2]!);
    }
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.join("><")}>`);
  return text;
}

/**
 * Asserts that `parts`, in order, are `whole` with at most one separator (line break, space
 * or tab) dropped between two parts: nothing else is missing or added.
 */
export function expectCovers(whole: string, parts: readonly string[]): void {
  let at = 0;
  parts.forEach((part, i) => {
    const separator = /^(?:\r\n|[\n \t])/.exec(whole.slice(at, at + 2))?.[0];
    if (i > 0 && separator && !whole.startsWith(part, at)) at += separator.length;
    if (!whole.startsWith(part, at)) {
      throw new Error(`part ${i} does not continue the text at ${at}: ${JSON.stringify(part.slice(0, 40))}`);
    }
    at += part.length;
  });
  if (at !== whole.length) throw new Error(`parts end at ${at} of ${whole.length}`);
}

/** A seeded pseudo-random generator (mulberry32), so that property tests are repeatable. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Text tricky to split: surrogate pairs, combining marks, ZWJ emoji, flags, keycaps, CRLF. */
export const TRICKY = [
  "a",
  "b",
  "x",
  "Z",
  " ",
  " ",
  "\t",
  "\n",
  "\r\n",
  "<",
  "&",
  "é",
  "e\u0301",
  "a\u0301\u0302",
  " \u0301",
  "😀",
  "👩‍👩‍👧",
  "🇫🇷",
  "1️⃣",
  "漢",
  "\u00a0",
];

/** A random string of `length` pieces of TRICKY. */
export function trickyText(next: () => number, length: number): string {
  let text = "";
  for (let i = 0; i < length; i++) text += TRICKY[Math.floor(next() * TRICKY.length)];
  return text;
}
