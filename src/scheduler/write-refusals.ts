import { isUnacknowledged } from "./durable-write.js";

/**
 * Redis not taking writes as this process saw it — refusing them (MISCONF: a snapshot or
 * the AOF it cannot write; OOM: maxmemory reached with noeviction) or out of reach (a
 * connection lost, no master while a failover runs, a master without its replicas) — so
 * that its claims hold off taking over rooms whose leases ran out meanwhile: their
 * holders could not renew them either, and may be alive with a sent part not yet
 * recorded (measured: a Sentinel master killed with down-after 5 s; a worker took a room
 * over 0.1 s before its holder's first renewal through the new master, and the part the
 * holder had sent went out again).
 */
export class WriteRefusals {
  private lastAt = Number.NEGATIVE_INFINITY;
  /** The first refusal of the node (not of one slot) since the refusals were last settled. */
  private outageFrom = Number.NEGATIVE_INFINITY;
  /** The last such refusal. */
  private outageLastAt = Number.NEGATIVE_INFINITY;
  /** When Redis was last seen taking a write again after them (`settled`). */
  private settledAt = Number.NEGATIVE_INFINITY;

  /** Notes `err` when Redis did not take a write because it refused it or could not be reached. */
  note(err: unknown): void {
    if (!(isWriteRefusal(err) || isUnreachable(err))) return;
    const now = Date.now();
    this.lastAt = now;
    // A slot in migration (TRYAGAIN) is one slot's matter; the rest of Redis takes writes.
    if (/^TRYAGAIN /.test(err instanceof Error ? err.message : "")) return;
    if (this.outageLastAt <= this.settledAt) this.outageFrom = now;
    this.outageLastAt = now;
  }

  /**
   * How long the refusals this process saw since Redis last took its write lasted (first
   * to last, ms), or undefined when there were none: the send windows' bookings ask Redis
   * for a write first then (src/scheduler/rate-limiter.ts).
   */
  unsettledMs(): number | undefined {
    return this.outageLastAt > this.settledAt ? this.outageLastAt - this.outageFrom : undefined;
  }

  /** When (local ms) the refusals this process saw since Redis last took its write began, or undefined when there were none. */
  unsettledSince(): number | undefined {
    return this.outageLastAt > this.settledAt ? this.outageFrom : undefined;
  }

  /** Redis took a write of this process that it sent at `sentAt`: the refusals before are over. */
  settled(sentAt: number): void {
    this.settledAt = Math.max(this.settledAt, sentAt);
  }

  /**
   * How long, from now, a room whose lease expired is still left to its holder: `graceMs`
   * after the last refused or unreachable write this process saw, 0 when that is over (a
   * takeover after a crash is not delayed unless Redis failed writes within `graceMs`).
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

/**
 * True when a write was not taken because Redis could not be reached or had no writable
 * master with its replicas (a failover, a restart, a slot range down); a slot that moved
 * (MOVED, ASK) is routine in resharding and ioredis follows it.
 */
export function isUnreachable(err: unknown): boolean {
  const message = err instanceof Error ? err.message : "";
  return isUnacknowledged(err) && !/^(MOVED|ASK) /.test(message);
}

/** This process's: every script call notes its refusals here (src/scheduler/lua-script.ts). */
export const writeRefusals = new WriteRefusals();
