import type { Logger } from "../core/log.js";
import type { RoomLease } from "./room-lease.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";
import { isUnreachable, isWriteRefusal } from "./write-refusals.js";

/** A renewal round Redis refused or could not take (MISCONF, OOM, a failover) is tried again this soon, not a quarter-lease later. */
const RENEW_AFTER_REFUSAL_MS = 200;

/**
 * Renews a process's held leases together, one call per lane and shard (no command
 * spans two shards); a lease Redis no longer confirms is marked lost, so that its turn
 * stops before any further side effect. A failed call leaves the leases as they are:
 * each is lost on its own once unconfirmed for its length (RoomLease).
 */
export async function renewLeases(
  scripts: SchedulerScripts,
  held: RoomLease[],
  leaseMs: number,
  log: Logger,
  /** Where the last failed call's error is left, for health, and whether Redis refused or could not take the write. */
  failed: { err?: string; refused?: boolean } = {},
  /** A failure's level: a round asked again soon after a refusal repeats the last one's warning at debug. */
  level: "warn" | "debug" = "warn",
): Promise<void> {
  const groups = new Map<string, RoomLease[]>();
  for (const lease of held) {
    // An unconfirmed lease is renewed too: Redis may take it again (no claim since).
    if (!lease.renewable) continue;
    const key = `${lease.shard} ${lease.lane}`;
    groups.set(key, [...(groups.get(key) ?? []), lease]);
  }
  await Promise.all(
    [...groups.values()].map(async (leases) => {
      const { lane, shard } = leases[0]!;
      const sent = Date.now();
      try {
        const renewed = await scripts.renew({ lane, shard, leases, leaseMs });
        leases.forEach((lease, i) => {
          if (renewed[i]) lease.confirm(sent);
          else if (!lease.taken) {
            lease.markLost();
            log.warn({ room: lease.room }, "room lease lost; its turn stops before any further side effect");
          }
        });
      } catch (err) {
        failed.err = (err as Error).message;
        if (isWriteRefusal(err) || isUnreachable(err)) failed.refused = true;
        log[level]({ err: failed.err, lane }, "lease renewal failed");
      }
    }),
  );
}

/**
 * The renewals of a process's held leases, on a connection of their own: a write that
 * waits for replicas (WAIT) holds its connection until they answer, and during a
 * failover every retried write does, for up to `redis.waitTimeoutSeconds` each;
 * renewals queued behind them lost leases that were still held (a turn then sent
 * again by the worker that took over). Runs every quarter of a lease, from before the
 * workers start until after they stopped (running turns keep their rooms while they
 * finish).
 */
export class LeaseRenewals {
  readonly name = "lease renewals";
  private timer: NodeJS.Timeout | undefined;
  /** The round asked for soon after Redis refused one (see `renew`). */
  private soon: NodeJS.Timeout | undefined;
  /** Local time of the last round whose every call was answered. */
  private renewedAt = Date.now();
  private lastError: string | undefined;

  constructor(
    private readonly options: {
      /** The scheduler's scripts on the renewals' own client. */
      scripts: SchedulerScripts;
      leaseMs: number;
      log: Logger;
      /** The leases held now. */
      held: () => RoomLease[];
    },
  ) {}

  async start(): Promise<void> {
    this.renewedAt = Date.now();
    this.timer = setInterval(() => void this.renew(), Math.max(200, this.options.leaseMs / 4));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.soon);
    this.timer = undefined;
    this.soon = undefined;
  }

  /** Stuck when rooms are held and no round has been answered for half a lease: they are being lost. */
  stuck(): string | undefined {
    const silentMs = Date.now() - this.renewedAt;
    const held = this.options.held().filter((l) => l.active || l.lost).length;
    if (held === 0 || silentMs < this.options.leaseMs / 2) return undefined;
    return `no renewal of the ${held} held room leases answered for ${Math.round(silentMs / 1000)} s${this.lastError ? ` (${this.lastError})` : ""}`;
  }

  private async renew(soon = false): Promise<void> {
    const { scripts, leaseMs, log } = this.options;
    const failed: { err?: string; refused?: boolean } = {};
    await renewLeases(scripts, this.options.held(), leaseMs, log, failed, soon ? "debug" : "warn");
    if (failed.err === undefined) this.renewedAt = Date.now();
    this.lastError = failed.err;
    // Redis refusing writes (MISCONF, OOM) or without a master (a failover) ends at a
    // moment nobody announces: asked again soon, the holder renews within a moment of it,
    // well before other workers' claims may take its rooms over (they hold off while they
    // saw such failures: write-refusals.ts).
    if (failed.refused && this.timer && !this.soon) {
      this.soon = setTimeout(() => {
        this.soon = undefined;
        void this.renew(true);
      }, RENEW_AFTER_REFUSAL_MS);
      this.soon.unref();
    }
  }
}
