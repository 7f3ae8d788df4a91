import { appendFileSync, existsSync, readFileSync } from "node:fs";

// What the revision-2026 test server shares with the tests that drive it: where it
// writes what happened (MCP26_LOG, one JSON line an event), the resource it serves
// and where that resource's text lives (MCP26_NOTE).

/** The resource clients subscribe to. */
export const BOARD_URI = "note://board";

/** One thing the server did, as a test reads it back. */
export interface ServerEvent {
  event: string;
  at: number;
  /** The server process that wrote it (a namespace may start several: probes, restarts). */
  pid: number;
  [detail: string]: unknown;
}

/** Appends an event to the server's log file, when it has one. */
export function logEvent(event: string, detail: Record<string, unknown> = {}): void {
  const file = process.env.MCP26_LOG;
  const line = { event, ...detail, pid: process.pid, at: Date.now() };
  if (file) appendFileSync(file, JSON.stringify(line) + "\n");
}

/** The events a server wrote to `file` so far. */
export function readEvents(file: string): ServerEvent[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ServerEvent);
}

/** The note resource's text now. */
export function note(): string {
  const file = process.env.MCP26_NOTE;
  return file && existsSync(file) ? readFileSync(file, "utf8") : "nothing yet";
}
