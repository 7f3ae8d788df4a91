import type { Logger } from "../core/log.js";
import type { LaneState } from "./lane-state.js";
import type { RoomLease } from "./room-lease.js";
import type { TurnInput } from "./turn-input.js";
import type { TurnRunner } from "./turn-runner.js";

/**
 * Rooms a lane lets wait for a booked send slot outside its slots, per slot (128 at
 * the default 8). A paced backlog is fair only when every chat waiting holds a
 * booking: Telegram's 30 sends a second are then shared in booking order, where a
 * few rooms held in turn would drain their own chats first and leave a tail of
 * chats at one send a second each. Each costs a timer and a share of one renewal
 * per shard; a killed process leaves them to be taken over when their leases end.
 */
const WAITING_PER_SLOT = 16;

/** A room this process holds: its lease, its run, and whether it only waits for a send slot. */
interface HeldRoom {
  lease: RoomLease;
  done: Promise<void>;
  waiting: boolean;
}

/**
 * The rooms this process holds and runs (claimed by src/scheduler/room-worker.ts): each
 * runs its turns one after another while its lease lasts, and counts against its
 * lane's slots unless it only waits for a booked send slot.
 */
export class HeldRooms {
  private readonly held = new Map<string, HeldRoom>();

  constructor(
    private readonly options: {
      runner: TurnRunner;
      concurrency: number;
      leaseMs: number;
      stopping: () => boolean;
      log: Logger;
    },
  ) {}

  /** How many rooms are held (waiting ones too). */
  get size(): number {
    return this.held.size;
  }

  has(room: string): boolean {
    return this.held.has(room);
  }

  /** The leases of the rooms held now, for their renewals. */
  leases(): RoomLease[] {
    return [...this.held.values()].map((h) => h.lease);
  }

  /** Settles when every run now going has ended. */
  async done(): Promise<void> {
    await Promise.all([...this.held.values()].map((h) => h.done));
  }

  /** Rooms of the lane that hold a slot (not only waiting for a send slot). */
  busy(lane: string): number {
    let n = 0;
    for (const h of this.held.values()) if (h.lease.lane === lane && !h.waiting) n += 1;
    return n;
  }

  /** Runs the room's turns from `first` while its lease lasts; the lane is signalled when it ends. */
  run(lane: LaneState, lease: RoomLease, first: TurnInput): void {
    const entry: HeldRoom = { lease, done: Promise.resolve(), waiting: false };
    const pause = (ms: number) => this.pause(lane, entry, ms);
    const { runner, stopping, log } = this.options;
    this.held.set(lease.room, entry);
    entry.done = (async () => {
      let input: TurnInput | undefined = first;
      try {
        while (input && lease.active) {
          const result = await runner.runOne(lease, input, stopping(), pause);
          input = result.next;
          if (result.resumeInMs !== undefined && !stopping()) lane.later(lease.room, result.resumeInMs + 1);
        }
      } catch (err) {
        log.error({ err, room: lease.room }, "room run failed; its lease will expire and it is taken over");
      } finally {
        if (this.held.get(lease.room) === entry) this.held.delete(lease.room);
        if (lane.afterRun.delete(lease.room) && !stopping()) lane.ready.add(lease.room);
        lane.signal();
      }
    })();
  }

  /** Hands a held room back: its lease freed and the room pending again, for any worker. */
  async letGo(lease: RoomLease): Promise<void> {
    await lease
      .release()
      .catch((err: unknown) =>
        this.options.log.warn({ err, room: lease.room }, "could not hand the room back; its lease expires"),
      );
  }

  /**
   * Lets a held room wait `ms` (at most half a lease) for its booked send slot instead
   * of parking, which would cost a park, a second claim and a re-read of the turn. Up
   * to WAITING_PER_SLOT × `concurrency` rooms of a lane wait so outside its slots, and
   * the lane claims others meanwhile; more wait in the slot they hold, which stops this
   * process claiming rooms whose slots would be further off still (the fleet takes them).
   */
  private async pause(lane: LaneState, entry: HeldRoom, ms: number): Promise<boolean> {
    if (this.options.stopping() || ms > this.options.leaseMs / 2) return false;
    let waiting = 0;
    for (const h of this.held.values()) if (h.lease.lane === lane.name && h.waiting) waiting += 1;
    entry.waiting = waiting < WAITING_PER_SLOT * this.options.concurrency;
    if (entry.waiting) lane.signal();
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      entry.waiting = false;
    }
    return true;
  }
}
