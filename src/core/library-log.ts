import type { Logger } from "pino";
import { silentLogger } from "./log.js";

let sink: Logger = silentLogger();

/** Points libraries' warnings at the process's logger (the runtime does this at start). */
export function setLibraryLogger(log: Logger): void {
  sink = log;
}

/**
 * A console-shaped logger for libraries that would otherwise write to the console
 * (ajv's `logger` option): their words go to the JSON log, never to a terminal room
 * or a chat.
 */
export function libraryLogger(library: string): {
  log: (...args: unknown[]) => void;
  warn: (...args: unknown[]) => void;
  error: (...args: unknown[]) => void;
} {
  const text = (args: unknown[]) => args.map((a) => (typeof a === "string" ? a : String(a))).join(" ");
  return {
    log: (...args) => sink.debug({ library }, text(args)),
    warn: (...args) => sink.warn({ library }, text(args)),
    error: (...args) => sink.error({ library }, text(args)),
  };
}

/**
 * Sends Node's process warnings (deprecations, listener leaks) to the log instead of
 * stderr, where they would land in a terminal room.
 */
export function routeProcessWarnings(): void {
  process.removeAllListeners("warning");
  process.on("warning", (warning) => {
    sink.warn({ library: "node", warning: warning.name, detail: warning.message }, "node process warning");
  });
}
