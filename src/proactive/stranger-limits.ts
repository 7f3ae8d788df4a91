import type { Logger } from "../core/log.js";

/** Most sources remembered at once: past it the oldest is forgotten, so a scan of many addresses costs bounded memory. */
const MAX_SOURCES = 10_000;
const MINUTE_MS = 60_000;

/**
 * Failed signature attempts per source address in a fixed one-minute window, in this
 * process's memory (nothing a stranger sends is written to Redis): past `perMinute`
 * a source is refused (429) before its request is read or checked.
 */
export class FailedAttempts {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until the source may try again; 0 when it may now. */
  waitMs(source: string): number {
    const window = this.windows.get(source);
    if (!window) return 0;
    const left = window.start + MINUTE_MS - this.now();
    if (left <= 0) {
      this.windows.delete(source);
      return 0;
    }
    return window.count >= this.perMinute ? left : 0;
  }

  /** Counts one failed attempt of the source. */
  failed(source: string): void {
    const now = this.now();
    const window = this.windows.get(source);
    if (window && window.start + MINUTE_MS > now) {
      window.count += 1;
      return;
    }
    this.windows.delete(source);
    if (this.windows.size >= MAX_SOURCES) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(source, { start: now, count: 1 });
  }
}

/**
 * A warning a stranger can cause on every request, written at most once a minute with
 * how many times it happened since the last one, so a flood costs one line a minute.
 */
export class MinuteLog {
  private lastAt = Number.NEGATIVE_INFINITY;
  private since = 0;

  constructor(
    private readonly log: Logger,
    private readonly message: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes one occurrence; writes the line when the last one is a minute old. */
  note(fields: Record<string, unknown>): void {
    this.since += 1;
    const now = this.now();
    if (now - this.lastAt < MINUTE_MS) return;
    this.log.warn({ ...fields, times: this.since }, this.message);
    this.lastAt = now;
    this.since = 0;
  }
}
