/** Spinner frames, one per tick. */
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Erase the whole line and return to its start. */
export const CLEAR_LINE = "\r\u001b[2K";

/** A terminal stream, as far as the status line needs one. */
export interface StatusOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/**
 * Shows `⠋ label (3s) · detail` on the terminal's current line while a turn runs, redrawn
 * every `everyMs`, and erases it when stopped. `detail` is read at each redraw, so a running
 * call's progress updates this one line in place. Only on a TTY: piped output stays exactly
 * the conversation.
 */
export function startStatusLine(
  output: StatusOutput,
  label: string,
  everyMs = 100,
  detail: () => string | undefined = () => undefined,
): () => void {
  if (output.isTTY !== true) return () => undefined;
  const started = Date.now();
  let frame = 0;
  const draw = () => {
    const seconds = Math.floor((Date.now() - started) / 1000);
    const more = detail();
    output.write(
      `${CLEAR_LINE}${FRAMES[frame++ % FRAMES.length]} ${label}${seconds > 0 ? ` (${seconds}s)` : ""}${more ? ` · ${more}` : ""}`,
    );
  };
  draw();
  const timer = setInterval(draw, everyMs);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    output.write(CLEAR_LINE);
  };
}
