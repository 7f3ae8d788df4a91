import { LeaseLostError } from "../core/delivery-errors.js";
import { retry, type RetryPolicy } from "../core/retry.js";
import type { FinishReply, ParkReply, ReleaseReply } from "./scheduler-replies.js";
import { isUnacknowledged } from "./durable-write.js";
import type { LeaseRef, TurnWrites } from "./scheduler-args.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";

/**
 * A fenced write that was not acknowledged (too few replicas, a connection lost to a
 * failover) is sent again while the lease is still ours: it is idempotent, and on the
 * new master it records what the old one may have lost (a part already sent).
 */
const UNACKNOWLEDGED: RetryPolicy = { attempts: Infinity, firstMs: 100, maxMs: 1000, jitter: true };

/** A lease not confirmed by Redis within its length minus this is treated as lost. */
export const LEASE_MARGIN_MS = 1000;

/** Lease and turn-record lengths every call of a lease needs. */
export interface LeaseSettings {
  leaseMs: number;
  turnRecordMs: number;
}

/** What a finish needs besides the lease: the handled head and what to store with it. */
export type FinishArgs = Omit<Parameters<SchedulerScripts["finish"]>[0], "lease" | "turnRecordMs">;

/** What a park needs besides the lease. */
export type ParkArgs = Omit<Parameters<SchedulerScripts["park"]>[0], "lease" | "turnRecordMs">;

/**
 * One worker's hold on one room: the fencing token and whether the worker knows it
 * lost the room, owned here and nowhere else. Every fenced write of the room goes
 * through `step`, `park`, `finish` or `release`; once the room is given back (or
 * lost) no further call writes anything, and a room left pending wakes a worker.
 */
export class RoomLease implements LeaseRef {
  private lostFlag = false;
  private ended = false;
  /** A write of this lease was sent again after an unacknowledged attempt (which may have applied). */
  private resent = false;
  /** Local time until which the lease is known to be ours (renewals move it on). */
  private confirmedUntil: number;

  constructor(
    private readonly scripts: SchedulerScripts,
    readonly room: string,
    readonly lane: string,
    readonly token: string,
    private readonly settings: LeaseSettings,
  ) {
    this.confirmedUntil = Date.now() + settings.leaseMs - LEASE_MARGIN_MS;
  }

  /** The room's shard (its leases are renewed together with the shard's others). */
  get shard(): number {
    return this.scripts.keys.shardOf(this.room);
  }

  /**
   * True while the room may be another worker's: Redis said so, or no renewal has been
   * confirmed for a lease (less a margin). Nothing is sent then. The second can end: a
   * renewal that Redis takes again (after a failover) confirms the lease anew, as long as
   * no worker claimed the room meanwhile.
   */
  get lost(): boolean {
    return this.lostFlag || (!this.ended && Date.now() > this.confirmedUntil);
  }

  /**
   * True once Redis said the room is not this worker's (another token). Its fenced writes
   * (recording what was sent, handing the room back) are still tried until then: they
   * change nothing once another worker claimed the room.
   */
  get taken(): boolean {
    return this.lostFlag;
  }

  /** Whether renewals should still be asked for: not ended and not known taken. */
  get renewable(): boolean {
    return !this.ended && !this.lostFlag;
  }

  /** True while the room is ours to work on. */
  get active(): boolean {
    return !this.ended && !this.lost;
  }

  /** Marks the room lost (a renewal found another token). */
  markLost(): void {
    this.lostFlag = true;
  }

  /** A renewal sent at local time `sentAt` was confirmed. */
  confirm(sentAt: number): void {
    this.confirmedUntil = sentAt + this.settings.leaseMs - LEASE_MARGIN_MS;
  }

  /** The fenced commit and "sending" mark before a send; throws LeaseLostError when not ours. */
  async step(writes: TurnWrites, part: string): Promise<void> {
    this.assertActive();
    const reply = await this.acknowledged(() => this.scripts.step({ lease: this, writes, part }));
    if (reply.kind === "lost") this.lose();
  }

  /** Ends the head turn; keeps the room for the next (`next`) or lets go of it. */
  async finish(args: FinishArgs): Promise<FinishReply> {
    this.assertNotTaken();
    const reply = await this.fenced(() =>
      this.scripts.finish({ lease: this, ...args, turnRecordMs: this.settings.turnRecordMs }),
    );
    if (reply.kind === "lost") await this.lostAfterResend();
    if (reply.kind === "released") await this.end(reply.leftPending);
    return reply;
  }

  /** Gives the room back until its head turn may resume, or dead-letters the turn. */
  async park(args: ParkArgs): Promise<ParkReply> {
    this.assertNotTaken();
    const reply = await this.fenced(() =>
      this.scripts.park({ lease: this, ...args, turnRecordMs: this.settings.turnRecordMs }),
    );
    if (reply.kind === "lost") await this.lostAfterResend();
    else await this.end((reply.kind === "dead" || reply.kind === "over") && reply.leftPending);
    return reply;
  }

  /** Hands the room back at once, pending in `toLane` (default its own) when it has events. */
  async release(toLane?: string): Promise<ReleaseReply> {
    const reply = await this.scripts.release({ lease: this, ...(toLane ? { toLane } : {}) });
    if (reply.kind === "lost") this.lostFlag = true;
    else await this.end(reply.leftPending, toLane);
    return reply;
  }

  /** Runs a fenced write until acknowledged, while the lease is still known to be ours. */
  private acknowledged<T>(write: () => Promise<T>): Promise<T> {
    return this.retried(write, () => this.lost);
  }

  /**
   * Runs a fenced write that sends nothing (a finish, a park) until acknowledged, until
   * Redis says the room is another worker's: it records what was sent and hands the
   * room on, and the fence makes it change nothing once another worker claimed it.
   */
  private fenced<T>(write: () => Promise<T>): Promise<T> {
    return this.retried(write, () => this.lostFlag);
  }

  private retried<T>(write: () => Promise<T>, stop: () => boolean): Promise<T> {
    return retry(
      write,
      (err) => {
        if (!isUnacknowledged(err) || stop()) return "fail";
        this.resent = true;
        return "retry";
      },
      UNACKNOWLEDGED,
    );
  }

  /**
   * The room is not ours (any more). When an earlier attempt of this write went
   * unacknowledged, that attempt most likely let go of the room itself — parked it or
   * left it pending for new events — so a worker of the lane is woken for it rather than
   * leaving it to the next look at the shard.
   */
  private async lostAfterResend(): Promise<void> {
    this.lostFlag = true;
    if (this.resent) await this.scripts.wake(this.lane, this.room).catch(() => undefined);
  }

  private async end(leftPending: boolean, lane = this.lane): Promise<void> {
    this.ended = true;
    // A lost wake-up only delays the room until a worker next looks (peek-shard.lua).
    if (leftPending) await this.scripts.wake(lane, this.room).catch(() => undefined);
  }

  private assertActive(): void {
    if (!this.active) throw new LeaseLostError(this.room);
  }

  private assertNotTaken(): void {
    if (this.ended || this.lostFlag) throw new LeaseLostError(this.room);
  }

  private lose(): never {
    this.lostFlag = true;
    throw new LeaseLostError(this.room);
  }
}
