import { ConfigError } from "../core/errors.js";

/** Splits a command line into words the way a shell would for plain and quoted words (no expansion). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(re)) {
    words.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
  }
  if (words.length === 0) throw new ConfigError("--command is empty");
  return words;
}
