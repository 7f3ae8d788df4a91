/**
 * Redis refusing writes (MISCONF: a snapshot or the AOF it cannot write; OOM: maxmemory
 * reached with noeviction) as this process saw it, so that its claims hold off taking
 * over rooms whose leases ran out meanwhile: their holders could not renew them either,
 * and may be alive with a sent part not yet recorded.
 */
export class WriteRefusals {
  private lastAt = Number.NEGATIVE_INFINITY;

  /** Notes `err` when it is Redis refusing a write (the command was not applied). */
  note(err: unknown): void {
    if (isWriteRefusal(err)) this.lastAt = Date.now();
  }

  /**
   * How long, from now, a room whose lease expired is still left to its holder: `graceMs`
   * after the last refusal this process saw, 0 when that is over (a takeover after a crash
   * is not delayed unless Redis refused writes within `graceMs`).
   */
  takeoverHoldMs(graceMs: number, now = Date.now()): number {
    return Math.max(0, Math.ceil(this.lastAt + graceMs - now));
  }
}

/**
 * How long after the last refusal a room whose lease expired is left to its holder: one
 * renewal interval (a quarter of a lease) and a second for the holder's retried writes.
 */
export function takeoverGraceMs(leaseMs: number): number {
  return leaseMs / 4 + 1000;
}

/** True for Redis' refusals of a write: nothing of the command (or script) was applied. */
export function isWriteRefusal(err: unknown): boolean {
  const message = err instanceof Error ? err.message : "";
  return /^(MISCONF |OOM command not allowed)/.test(message);
}

/** This process's: every script call notes its refusals here (src/scheduler/lua-script.ts). */
export const writeRefusals = new WriteRefusals();
