import type { RedisClient } from "../sessions/redis-connection.js";
import type { Logger } from "../core/log.js";

/**
 * Since when some process has been taking proactive jobs without a break, the line
 * between a schedule's missed fires and the ones it owes. Every process with a bullmq
 * worker renews one key (its value: when the current run of workers began) every
 * second; the key lapses `downMs` after the last of them stopped, and the next worker
 * to start begins a new run. A period before that time came due while roomgate was
 * down (the schedule's `missed` policy applies); every later one had a worker to
 * take it and is one turn.
 */
export class WorkerUptime {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly downMs: number,
    private readonly log: Logger,
  ) {}

  /** Joins the run of workers (or begins one), then renews it until `stop`. */
  async start(): Promise<void> {
    await this.since();
    // Renewed well inside the lapse, so a busy event loop does not end the run.
    const everyMs = Math.min(1000, Math.floor(this.downMs / 5));
    this.timer = setInterval(() => {
      this.since().catch((err: unknown) => this.log.warn({ err }, "worker uptime not renewed"));
    }, everyMs);
    this.timer.unref();
  }

  /** Renews the record and returns since when (ms) workers have been running; now, when none were. */
  async since(): Promise<number> {
    const now = Date.now();
    // SET NX GET: the start of the current run, or nothing when this begins one; both renew it.
    const [set, renew] = (await this.redis
      .multi()
      .set(this.key, now, "PX", this.downMs, "NX", "GET")
      .pexpire(this.key, this.downMs)
      .exec()) ?? [[null, null]];
    const err = set?.[0] ?? renew?.[0];
    if (err) throw err;
    const began = typeof set?.[1] === "string" ? Number(set[1]) : Number.NaN;
    return Number.isFinite(began) ? began : now;
  }

  /** Stops renewing: the run ends `downMs` later unless another process renews it. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
