/**
 * Characters that would act on a terminal or reorder text rather than show: C0 and C1
 * controls (escape sequences start with one), DEL, and the bidirectional overrides,
 * embeddings and isolates (a name that reads backwards).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A name or line from outside (a display name, a room id, a tool's title) as a CLI
 * prints it: every control character shown escaped (`\x1b`, `\u202e`), the rest as is,
 * so what someone else chose cannot move the cursor, recolour or rewrite the operator's
 * terminal.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
