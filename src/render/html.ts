import type { Container, Doc } from "./doc.js";
import { piecesOf } from "./doc.js";

/** How one platform's HTML marks a line break and a monospace block. */
export interface HtmlDialect {
  /** What a line break outside a monospace block becomes. */
  lineBreak: string;
  codeOpen: string;
  codeClose: string;
}

/**
 * Marks up `doc.text.slice(start, end)`: every character escaped, links as `<a href>`, the
 * caveat in `<blockquote>`, code in the dialect's monospace block. A block the range cuts
 * is closed at the range's end and opened at its start, so the result is well-formed alone.
 */
export function htmlOf(doc: Doc, start: number, end: number, dialect: HtmlDialect): string {
  const open = { plain: "", quote: "<blockquote>", code: dialect.codeOpen };
  const close = { plain: "", quote: "</blockquote>", code: dialect.codeClose };
  let html = "";
  let inside: Container = "plain";
  for (const { text, span } of piecesOf(doc, start, end)) {
    if (span.container !== inside) {
      html += close[inside] + open[span.container];
      inside = span.container;
    }
    const escaped = escapeHtml(text);
    const shown = span.container === "code" ? escaped : escaped.replaceAll("\n", dialect.lineBreak);
    html += span.link ? `<a href="${escapeAttribute(span.link.href)}">${shown}</a>` : shown;
  }
  return html + close[inside];
}

/** Escapes text for HTML: only `&`, `<` and `>`, so that parsing gives back the text exactly. */
function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** Escapes an attribute value written between double quotes. */
function escapeAttribute(value: string): string {
  return escapeHtml(value).replaceAll('"', "&quot;");
}

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/**
 * The text an HTML message shows, without its markup: tags removed and entities decoded
 * (the inverse of the escaping above). A platform that refuses a part's markup gets this
 * instead, so the person still sees every character (only formatting and link targets are lost).
 */
export function htmlToPlainText(html: string): string {
  return html
    .replace(/<\/?[A-Za-z][^<>]*>/g, "")
    .replace(
      /&(?:#x([0-9a-f]+)|#([0-9]+)|(lt|gt|amp|quot));/gi,
      (whole, hex?: string, dec?: string, name?: string) => {
        if (name !== undefined) return NAMED[name.toLowerCase()] ?? whole;
        const code = hex !== undefined ? parseInt(hex, 16) : Number(dec);
        return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      },
    );
}
