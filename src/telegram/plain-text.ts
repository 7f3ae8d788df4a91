const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/**
 * The text Telegram would have shown for an HTML message, without its markup: tags
 * removed and entities decoded. Used to resend a part Telegram could not parse, so
 * the person still gets every character (only formatting and link targets are lost).
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
