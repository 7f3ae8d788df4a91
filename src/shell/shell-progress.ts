import type { ProgressUpdate } from "../core/progress.js";

/** Erase the whole line (the turn's spinner, on a TTY) and return to its start. */
const CLEAR_LINE = "\r\u001b[2K";

/**
 * A running call's status in a terminal: one line per update, after clearing the
 * spinner's line on a TTY, so a pipe (a script, a log) reads the updates in order
 * and the spinner keeps its own line below them.
 */
export function writeProgress(
  output: NodeJS.WritableStream,
  interactive: boolean,
  update: ProgressUpdate,
): void {
  output.write(`${interactive ? CLEAR_LINE : ""}${update.text}\n`);
}
