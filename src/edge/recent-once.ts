/** Most keys one process remembers; the oldest is forgotten first. */
const DEFAULT_CAPACITY = 50_000;

/**
 * A bounded in-process memory of keys seen recently, each until its own expiry: what
 * lets the edge do a thing (log a stranger, ask Redis for a notice, leave a group) once
 * per key and period without touching anything for the repeats. Forgetting a key early
 * (under a flood of distinct keys) only means doing the thing once more.
 */
export class RecentOnce {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {}

  /** True while `key` is remembered. */
  has(key: string): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(key);
    return false;
  }

  /** Remembers `key` for `ms`. */
  remember(key: string, ms: number): void {
    this.until.delete(key);
    this.until.set(key, this.now() + ms);
    // Map order is insertion order: the first key is the one remembered longest ago.
    if (this.until.size > this.capacity) this.until.delete(this.until.keys().next().value!);
  }

  /** True the first time `key` is seen in `ms` (and remembers it), false for repeats. */
  first(key: string, ms: number): boolean {
    if (this.has(key)) return false;
    this.remember(key, ms);
    return true;
  }
}
