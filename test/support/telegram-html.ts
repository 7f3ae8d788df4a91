/**
 * Telegram's HTML parse mode as the Bot API applies it (modelled on tdlib's
 * parse_html): the supported tags become entities, `&lt; &gt; &amp; &quot;` and
 * numeric entities are decoded, an unknown `&…` stays literal, and anything else
 * malformed is refused with the error text Telegram uses.
 */

/** A message entity with offsets in UTF-16 code units, as the Bot API reports them. */
export interface ParsedEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
}

/** The parsed text and its entities, or Telegram's reason for refusing the markup. */
export type HtmlParse = { ok: true; text: string; entities: ParsedEntity[] } | { ok: false; error: string };

const ENTITY_OF: Record<string, string> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  span: "spoiler",
  a: "text_link",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
  "tg-emoji": "custom_emoji",
  "tg-time": "date_time",
};
const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };
const ENTITY = /^&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot));/;

interface Open {
  tag: string;
  start: number;
  attrs: Record<string, string>;
}

/** Parses text sent with `parse_mode: "HTML"`. */
export function parseTelegramHtml(html: string): HtmlParse {
  let text = "";
  const entities: ParsedEntity[] = [];
  const stack: Open[] = [];
  const byteAt = (i: number) => Buffer.byteLength(html.slice(0, i));
  const fail = (error: string): HtmlParse => ({ ok: false, error: `can't parse entities: ${error}` });
  let i = 0;
  while (i < html.length) {
    const c = html[i]!;
    if (c === "&") {
      const m = ENTITY.exec(html.slice(i));
      const decoded = m ? decodeEntity(m) : undefined;
      text += decoded ?? "&";
      i += decoded === undefined ? 1 : m![0].length;
      continue;
    }
    if (c !== "<") {
      text += c;
      i += 1;
      continue;
    }
    const begin = i;
    if (html[i + 1] === "/") {
      if (stack.length === 0) return fail(`Unexpected end tag at byte offset ${byteAt(begin)}`);
      let j = i + 2;
      while (j < html.length && !/\s/.test(html[j]!) && html[j] !== ">") j++;
      const name = html.slice(i + 2, j).toLowerCase();
      while (j < html.length && /\s/.test(html[j]!)) j++;
      if (html[j] !== ">") return fail(`Unclosed end tag at byte offset ${byteAt(begin)}`);
      const open = stack.pop()!;
      if (name !== "" && name !== open.tag) {
        return fail(
          `Unmatched end tag at byte offset ${byteAt(begin)}, expected "</${open.tag}>", found "</${name}>"`,
        );
      }
      const entity = toEntity(open, text.length, stack);
      if (typeof entity === "string") return fail(entity);
      if (entity) entities.push(entity);
      i = j + 1;
      continue;
    }
    let j = i + 1;
    while (j < html.length && !/\s/.test(html[j]!) && html[j] !== ">") j++;
    if (j >= html.length) return fail(`Unclosed start tag at byte offset ${byteAt(begin)}`);
    const tag = html.slice(i + 1, j).toLowerCase();
    if (!(tag in ENTITY_OF)) return fail(`Unsupported start tag "${tag}" at byte offset ${byteAt(begin)}`);
    const attrs: Record<string, string> = {};
    for (;;) {
      while (j < html.length && /\s/.test(html[j]!)) j++;
      if (j >= html.length) return fail(`Unclosed start tag at byte offset ${byteAt(begin)}`);
      if (html[j] === ">") break;
      const nameStart = j;
      while (j < html.length && /[A-Za-z0-9_-]/.test(html[j]!)) j++;
      const name = html.slice(nameStart, j).toLowerCase();
      if (name === "")
        return fail(`Empty attribute name in the tag "${tag}" at byte offset ${byteAt(begin)}`);
      if (html[j] !== "=") {
        attrs[name] = "";
        continue;
      }
      j++;
      const quote = html[j];
      let raw: string;
      if (quote === '"' || quote === "'") {
        const end = html.indexOf(quote, j + 1);
        if (end < 0) return fail(`Unclosed start tag at byte offset ${byteAt(begin)}`);
        raw = html.slice(j + 1, end);
        j = end + 1;
      } else {
        const start = j;
        while (j < html.length && !/[\s>]/.test(html[j]!)) j++;
        raw = html.slice(start, j);
      }
      attrs[name] = decodeAll(raw);
    }
    if (tag === "span" && attrs.class !== "tg-spoiler") {
      return fail(`Tag "span" must have class "tg-spoiler" at byte offset ${byteAt(begin)}`);
    }
    stack.push({ tag, start: text.length, attrs });
    i = j + 1;
  }
  const open = stack.at(-1);
  if (open) return fail(`Can't find end tag corresponding to start tag "${open.tag}"`);
  return { ok: true, text, entities: entities.sort((a, b) => a.offset - b.offset) };
}

function toEntity(open: Open, end: number, outer: Open[]): ParsedEntity | string | null {
  const length = end - open.start;
  const base = { type: ENTITY_OF[open.tag]!, offset: open.start, length };
  if (length === 0) return null;
  if (open.tag === "a") return open.attrs.href ? { ...base, url: open.attrs.href } : null;
  if (open.tag === "blockquote") {
    if (outer.some((o) => o.tag === "blockquote")) return "Blockquote entities can't be nested";
    return { ...base, type: "expandable" in open.attrs ? "expandable_blockquote" : "blockquote" };
  }
  if (open.tag === "code" && outer.at(-1)?.tag === "pre") {
    const language = /^language-(.+)$/.exec(open.attrs.class ?? "")?.[1];
    return language ? { ...base, type: "pre", language } : null;
  }
  return base;
}

function decodeEntity(m: RegExpExecArray): string | undefined {
  const [, hex, dec, name] = m;
  if (name !== undefined) return NAMED[name];
  const code = hex !== undefined ? parseInt(hex, 16) : Number(dec);
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}

function decodeAll(raw: string): string {
  let out = "";
  for (let i = 0; i < raw.length;) {
    const m = raw[i] === "&" ? ENTITY.exec(raw.slice(i)) : null;
    const decoded = m ? decodeEntity(m) : undefined;
    out += decoded ?? raw[i];
    i += decoded === undefined ? 1 : m![0].length;
  }
  return out;
}
