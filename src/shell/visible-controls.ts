/**
 * Control characters a terminal would act on: C0 except tab and line feed, DEL, and C1.
 * ESC starts every escape sequence (CSI, OSC, …), so once it is shown as text the rest of
 * a sequence is inert text too.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Makes control characters visible instead of letting the terminal interpret them: each
 * becomes a `\xHH` (or `\uHHHH` for C1) escape, so an OSC 52 clipboard write or SGR 8
 * hidden text from a namespace is shown, not run.
 */
export function visibleControls(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x80
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
