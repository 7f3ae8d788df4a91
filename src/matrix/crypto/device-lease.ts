import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../core/log.js";
import type { DeviceScripts } from "./device-scripts.js";

/** How the lease is held: its length, and how often a standby asks for it. */
export interface DeviceLeaseTiming {
  leaseMs: number;
  /** How often a process without the lease tries to take it. */
  pollMs: number;
}

/**
 * The Redis lease on the bot's Matrix device: one process at a time holds it and is the
 * only one that decrypts, encrypts and writes the device's store. The holder renews it
 * every third of its length; when a renewal is refused, or none succeeded for long
 * enough that the lease may have run out on Redis' clock, the holder counts it as lost
 * at once (`onLost`) rather than keep working on a device another process may own.
 */
export class DeviceLease {
  /** This holding's token: every fenced write carries it. A new one for every acquisition. */
  token = "";
  private held = false;
  private renewer: NodeJS.Timeout | undefined;
  /** When the last successful renewal (or the acquisition) was sent. */
  private confirmedAt = 0;
  private lostHandler: ((reason: string) => void) | undefined;

  constructor(
    private readonly scripts: DeviceScripts,
    /** `keys.matrixDevice(userId, deviceId, "lease")`. */
    readonly key: string,
    private readonly timing: DeviceLeaseTiming,
    private readonly log: Logger,
  ) {}

  /** Whether this process holds the lease (as far as it can tell without asking Redis). */
  get isHeld(): boolean {
    return this.held && Date.now() - this.confirmedAt < this.safeMs();
  }

  /** Calls `handler` once each time a held lease is lost. */
  onLost(handler: (reason: string) => void): void {
    this.lostHandler = handler;
  }

  /** Tries once to take the lease; on success starts renewing it. */
  async tryAcquire(): Promise<boolean> {
    const token = randomUUID();
    const sentAt = Date.now();
    if (!(await this.scripts.acquire(this.key, token, this.timing.leaseMs))) return false;
    this.token = token;
    this.held = true;
    this.confirmedAt = sentAt;
    this.scheduleRenewal();
    return true;
  }

  /**
   * Waits until the lease is taken (true) or `signal` aborts (false), trying every
   * `pollMs`. Redis errors are logged and tried again.
   */
  async acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      try {
        if (await this.tryAcquire()) return true;
      } catch (err) {
        this.log.warn({ err }, "matrix: could not ask Redis for the device lease; trying again");
      }
      await sleep(this.timing.pollMs, undefined, { signal }).catch(() => undefined);
    }
    return false;
  }

  /** Gives the lease up (a clean stop), so a standby can take the device at once; a lost lease is left alone. */
  async release(): Promise<void> {
    this.stopRenewing();
    const token = this.token;
    this.token = "";
    if (token === "") return;
    await this.scripts
      .release(this.key, token)
      .catch((err: unknown) => this.log.warn({ err }, "matrix: could not release the device lease"));
  }

  /** Stops renewing without telling Redis: the lease runs out by itself. */
  stopRenewing(): void {
    this.held = false;
    clearTimeout(this.renewer);
    this.renewer = undefined;
  }

  /** How long after the last confirmed renewal the lease still surely holds on Redis' clock. */
  private safeMs(): number {
    return this.timing.leaseMs - Math.max(250, Math.round(this.timing.leaseMs / 5));
  }

  private scheduleRenewal(inMs = Math.round(this.timing.leaseMs / 3)): void {
    clearTimeout(this.renewer);
    this.renewer = setTimeout(() => void this.renew(), Math.max(50, inMs));
    this.renewer.unref();
  }

  private async renew(): Promise<void> {
    if (!this.held) return;
    const sentAt = Date.now();
    try {
      const renewed = await this.scripts.renew(this.key, this.token, this.timing.leaseMs);
      if (!this.held) return;
      if (!renewed) return this.lose("another process holds the device lease");
      this.confirmedAt = sentAt;
    } catch (err) {
      if (!this.held) return;
      this.log.warn({ err }, "matrix: the device lease could not be renewed; trying again");
      const left = this.safeMs() - (Date.now() - this.confirmedAt);
      if (left <= 0) return this.lose("the lease could not be renewed before it could run out");
      return this.scheduleRenewal(Math.min(left, 1000));
    }
    this.scheduleRenewal();
  }

  private lose(reason: string): void {
    this.stopRenewing();
    this.log.error({ reason }, "matrix: lost the device lease");
    this.lostHandler?.(reason);
  }
}
