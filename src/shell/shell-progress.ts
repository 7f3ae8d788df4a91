import type { ProgressUpdate } from "../core/progress.js";

/**
 * A running call's status when the output is not a terminal (a pipe, a script, a log):
 * one line per update, in order. On a TTY the status line shows it in place instead.
 */
export function writeProgress(output: NodeJS.WritableStream, update: ProgressUpdate): void {
  output.write(`${update.text}\n`);
}
