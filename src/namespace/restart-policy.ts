import { backoffMs } from "../core/retry.js";

/** Tuning of a namespace's restarts; the defaults suit a child process on one machine. */
export interface RestartPolicyOptions {
  /** Wait before the first restart after a crash or a failed start. */
  readonly baseMs?: number;
  /** Longest wait between two starts, however often the server failed. */
  readonly maxMs?: number;
  /**
   * A connection that stayed up this long counts as healthy: the next failure starts over
   * at `baseMs` (as does one that answered a call, `answered`).
   */
  readonly stableMs?: number;
  readonly now?: () => number;
}

/**
 * When a namespace server may be started again: exponential backoff over consecutive
 * failures (crashes and failed starts alike), so a server that dies on every message
 * is not respawned at the rate messages arrive.
 */
export class RestartPolicy {
  private failures = 0;
  private notBefore = 0;
  private upSince: number | undefined;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly stableMs: number;
  private readonly now: () => number;

  constructor(options: RestartPolicyOptions = {}) {
    this.baseMs = options.baseMs ?? 250;
    this.maxMs = options.maxMs ?? 30_000;
    this.stableMs = options.stableMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Milliseconds until the next start is allowed (0: now). */
  get waitMs(): number {
    return Math.max(0, this.notBefore - this.now());
  }

  /** Consecutive failures since the server was last healthy. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** The server is up. */
  started(): void {
    this.upSince = this.now();
  }

  /**
   * The server answered a call since it was last started: it works, so its next crash
   * (a poison message, most likely, which the client sets aside after two) starts the
   * backoff over instead of growing it. A server that dies on every message never
   * answers one, and keeps backing off.
   */
  answered(): void {
    if (this.upSince !== undefined) this.failures = 0;
  }

  /** The server crashed or could not start; returns the wait before the next start. */
  failed(): number {
    const now = this.now();
    if (this.upSince !== undefined && now - this.upSince >= this.stableMs) this.failures = 0;
    this.upSince = undefined;
    this.failures += 1;
    const delay = backoffMs({ firstMs: this.baseMs, maxMs: this.maxMs }, this.failures - 1);
    this.notBefore = now + delay;
    return delay;
  }
}
