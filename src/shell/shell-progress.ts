import type { ProgressUpdate } from "../core/progress.js";

/**
 * A running call's status in a terminal: one line rewritten in place on a TTY, and
 * on a pipe (a script, a log) one line per update, so nothing is garbled.
 */
export function writeProgress(
  output: NodeJS.WritableStream,
  interactive: boolean,
  update: ProgressUpdate,
): void {
  if (interactive) output.write(`\r\x1b[K${update.text}${update.done ? "\n" : ""}`);
  else output.write(`${update.text}\n`);
}
