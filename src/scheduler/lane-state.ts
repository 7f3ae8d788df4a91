/** How often a lane this process may serve but does not now (`LaneSpec.active`) is looked at again. */
export const INACTIVE_RECHECK_MS = 250;

/**
 * A lane a process serves; with `active`, only while it answers true (the lane of
 * encrypted Matrix rooms is served by the process that owns the device, and ownership
 * moves at runtime). While inactive the lane claims nothing and pops no wake-ups, so
 * they wait for the process that serves it.
 */
export interface LaneSpec {
  name: string;
  active?: () => boolean;
}

/** One lane's dispatch state in this process: rooms to try, and what wakes the loop. */
export class LaneState {
  /** Rooms to claim next, in the order they became known (woken, due, parked here, taken over). */
  readonly ready = new Set<string>();
  readonly timers = new Set<NodeJS.Timeout>();
  /** Rooms this process parked (or found not yet due) and will claim on its own timer. */
  readonly resuming = new Set<string>();
  /**
   * Rooms that became ready while this process still held them (a wake-up for an event
   * queued just after the holder let go): tried again once the run ends.
   */
  readonly afterRun = new Set<string>();
  /** Slots kept for claims not answered yet: the dispatch loop's and those made with an enqueue (RoomWorker.ticket). */
  claiming = 0;
  lastPeek = 0;
  /** A look at every shard (LaneFeed.peek) is running. */
  peeking = false;
  peekTimer: NodeJS.Timeout | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly name: string,
    readonly active: () => boolean = () => true,
  ) {}

  /** Wakes whatever of the lane's loops waits. */
  signal(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiting) wake();
  }

  /** Waits until signalled or `ms` passed. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, ms));
      this.waiters.add(wake);
    });
  }

  /** Makes `room` ready in `ms` (a parked room resuming, a room not yet due). */
  later(room: string, ms: number): void {
    this.resuming.add(room);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.resuming.delete(room);
      this.ready.add(room);
      this.signal();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.resuming.clear();
    this.afterRun.clear();
    clearTimeout(this.peekTimer);
    this.signal();
  }
}
