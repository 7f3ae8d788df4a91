import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger } from "../core/log.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { RoomLease } from "./room-lease.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";
import { LaneFeed } from "./lane-feed.js";
import { INACTIVE_RECHECK_MS, LaneState, type LaneSpec } from "./lane-state.js";
import type { ClaimTicket } from "./redis-inbox.js";
import type { ClaimReply } from "./scheduler-replies.js";
import type { TurnInput, TurnRunner } from "./turn-runner.js";

type Claimed = Extract<ClaimReply, { kind: "claimed" }>;

/**
 * A lane looks at every shard at least this often (lost wake-ups, rooms parked by a
 * process that died, expired leases), and at the time the last look said something
 * falls due; half a lease, so that a lease taken since the last look is seen before
 * it can expire. At most this long, at least a second.
 */
const PEEK_EVERY_MAX_MS = 5000;
/** How long handing rooms back at shutdown may take. */
const LET_GO_MS = 2000;

/** Waits for `work`, but no longer than `ms`. */
async function within(ms: number, work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

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
 * Claims rooms and runs them, `concurrency` at a time per lane. Every room has a
 * name when it is claimed: one blocked connection per lane pops the lane's wake
 * list (rooms that became pending, any shard), and the lane's loop also claims the
 * rooms it parked itself when they are due and, every half a lease or when idle,
 * looks at each shard for due rooms and expired leases (takeover). No command
 * spans two shards. The leases of held rooms (`leases`) are renewed by
 * LeaseRenewals; a room whose renewal fails past its lease is lost and its turn
 * stops before any further side effect.
 */
export class RoomWorker {
  /** Names this process in its lease tokens (host/pid/random), so a log can say who held a room. */
  private readonly id = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly held = new Map<string, HeldRoom>();
  private readonly lanes = new Map<string, LaneState>();
  private readonly blockers: RedisClient[] = [];
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  private seq = 0;
  private readonly peekEveryMs: number;
  private readonly feed: LaneFeed;
  /** Local time of the last claim or look answered by Redis, for health. */
  lastClaimAt = 0;

  constructor(
    private readonly options: {
      scripts: SchedulerScripts;
      /** A client of its own, named for logs and health, for a lane's BLMPOP, which holds back its health PING for up to `blocksForMs`. */
      blocker: (name: string, blocksForMs: number) => RedisClient;
      runner: TurnRunner;
      lanes: (string | LaneSpec)[];
      concurrency: number;
      leaseMs: number;
      turnRecordMs: number;
      log: Logger;
    },
  ) {
    this.peekEveryMs = Math.max(1000, Math.min(PEEK_EVERY_MAX_MS, options.leaseMs / 2));
    this.feed = new LaneFeed({
      scripts: options.scripts,
      peekEveryMs: this.peekEveryMs,
      free: (lane) => this.free(lane),
      stopping: () => this.stopping,
      answered: () => (this.lastClaimAt = Date.now()),
      log: options.log,
    });
  }

  /** Starts one dispatch loop and one wake-up listener per lane (the leases are renewed by LeaseRenewals). */
  async start(): Promise<void> {
    this.lastClaimAt = Date.now();
    for (const spec of this.options.lanes) {
      const lane = typeof spec === "string" ? new LaneState(spec) : new LaneState(spec.name, spec.active);
      this.lanes.set(lane.name, lane);
      const blocker = this.options.blocker(`wake-ups (${lane.name})`, this.peekEveryMs);
      blocker.on("error", () => undefined);
      this.blockers.push(blocker);
      this.loops.push(this.dispatch(lane), this.feed.listen(lane, blocker));
    }
  }

  /** The leases of the rooms this process holds now, for their renewals. */
  leases(): RoomLease[] {
    return [...this.held.values()].map((h) => h.lease);
  }

  /** Whether the loops run and Redis answered recently (or every slot is busy). */
  healthy(): boolean {
    return this.stuck() === undefined;
  }

  /** Why the workers cannot take rooms now (for health), or undefined. */
  stuck(): string | undefined {
    if (this.stopping) return "stopping";
    const full = this.held.size >= this.options.concurrency * this.lanes.size;
    const silentMs = Date.now() - this.lastClaimAt;
    if (full || silentMs < this.peekEveryMs * 3) return undefined;
    return `no claim or look at the queue answered for ${Math.round(silentMs / 1000)} s`;
  }

  /**
   * Stops claiming, lets running turns finish for at most `graceMs` (each room is
   * let go after its current turn), then lets go of the rooms still held so that
   * another worker continues them at once.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    for (const lane of this.lanes.values()) lane.clear();
    for (const b of this.blockers) b.disconnect();
    // Running turns get the grace; a loop waiting on an unreachable Redis holds no room and
    // does not hold the shutdown (its call fails when the connections close).
    await within(graceMs, Promise.all([...this.held.values()].map((h) => h.done)));
    await within(100, Promise.all(this.loops));
    const left = [...this.held.values()].map((h) => h.lease);
    await within(LET_GO_MS, Promise.all(left.map((lease) => this.letGo(lease))));
    if (left.length > 0)
      this.options.log.warn({ rooms: left.length }, "shutdown grace over; rooms handed back");
  }

  /**
   * Takes a room that just became pending when this process serves its lane and has a
   * free slot for it: a process runs what it receives up to its concurrency without a
   * wake-up through Redis, and the fleet shares what is beyond that.
   */
  offer(laneName: string, room: string): boolean {
    const lane = this.lanes.get(laneName);
    if (!lane || this.stopping || !lane.active() || this.free(lane) <= lane.ready.size) return false;
    lane.ready.add(room);
    lane.signal();
    return true;
  }

  /**
   * Keeps a free slot of the lane for a claim made with an enqueue (RedisInbox), so a
   * message for an idle room is taken in the call that queues it; undefined when the
   * lane is not served here, has no slot beyond the rooms already ready to claim, or
   * holds the room already (its holder sees the event before letting go).
   */
  ticket(laneName: string, room: string): ClaimTicket | undefined {
    const lane = this.lanes.get(laneName);
    if (!lane || this.stopping || !lane.active() || this.held.has(room)) return undefined;
    if (this.free(lane) <= lane.ready.size) return undefined;
    lane.claiming += 1;
    let open = true;
    const close = () => {
      if (open) lane.claiming -= 1;
      open = false;
    };
    const { leaseMs, turnRecordMs } = this.options;
    const token = this.nextToken();
    return {
      claim: { token, leaseMs, turnRecordMs },
      taken: (reply) => {
        close();
        this.lastClaimAt = Date.now();
        this.take(lane, room, token, reply);
      },
      dropped: () => {
        close();
        lane.signal();
      },
    };
  }

  private free(lane: LaneState): number {
    let busy = lane.claiming;
    for (const h of this.held.values()) if (h.lease.lane === lane.name && !h.waiting) busy += 1;
    return this.options.concurrency - busy;
  }

  private nextToken(): string {
    return `${this.id}:${(this.seq += 1)}`;
  }

  /**
   * Lets a held room wait `ms` (at most half a lease) for its booked send slot instead
   * of parking, which would cost a park, a second claim and a re-read of the turn. Up
   * to WAITING_PER_SLOT × `concurrency` rooms of a lane wait so outside its slots, and
   * the lane claims others meanwhile; more wait in the slot they hold, which stops this
   * process claiming rooms whose slots would be further off still (the fleet takes them).
   */
  private async pause(lane: LaneState, entry: HeldRoom, ms: number): Promise<boolean> {
    if (this.stopping || ms > this.options.leaseMs / 2) return false;
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

  private async dispatch(lane: LaneState): Promise<void> {
    while (!this.stopping) {
      if (!lane.active()) {
        // Looked at afresh once served again: what waited meanwhile is due now.
        lane.ready.clear();
        lane.lastPeek = 0;
        await lane.wait(INACTIVE_RECHECK_MS);
        continue;
      }
      if (this.free(lane) <= 0) {
        await lane.wait(this.peekEveryMs);
        continue;
      }
      if (Date.now() - lane.lastPeek >= this.peekEveryMs) {
        await this.feed.peek(lane);
        continue;
      }
      const room = lane.ready.values().next().value;
      if (room === undefined) {
        await lane.wait(this.peekEveryMs - (Date.now() - lane.lastPeek));
        continue;
      }
      lane.ready.delete(room);
      if (this.held.has(room)) {
        lane.afterRun.add(room);
        continue;
      }
      await this.claim(lane, room);
    }
  }

  private async claim(lane: LaneState, room: string): Promise<void> {
    const { scripts, log, leaseMs, turnRecordMs } = this.options;
    const token = this.nextToken();
    try {
      const reply = await scripts.claim({ room, lane: lane.name, token, leaseMs, turnRecordMs });
      this.lastClaimAt = Date.now();
      if (reply.kind === "claimed") {
        this.take(lane, room, token, reply);
      } else if (reply.kind === "later") {
        lane.later(room, reply.dueInMs + 1);
      }
    } catch (err) {
      if (this.stopping) return;
      log.warn({ err: (err as Error).message, lane: lane.name, room }, "claim failed; retrying");
      lane.later(room, 500);
    }
  }

  /** Runs a room claimed under `token`; one claimed while stopping is handed back at once. */
  private take(lane: LaneState, room: string, token: string, reply: Claimed): void {
    const { scripts, leaseMs, turnRecordMs } = this.options;
    const lease = new RoomLease(scripts, room, lane.name, token, { leaseMs, turnRecordMs });
    if (this.stopping) {
      void this.letGo(lease);
      return;
    }
    this.run(lane, lease, { head: reply.head, session: reply.session, record: reply.record, now: reply.now });
  }

  private run(lane: LaneState, lease: RoomLease, first: TurnInput): void {
    const entry: HeldRoom = { lease, done: Promise.resolve(), waiting: false };
    const pause = (ms: number) => this.pause(lane, entry, ms);
    this.held.set(lease.room, entry);
    entry.done = (async () => {
      let input: TurnInput | undefined = first;
      try {
        while (input && lease.active) {
          const result = await this.options.runner.runOne(lease, input, this.stopping, pause);
          input = result.next;
          if (result.resumeInMs !== undefined && !this.stopping)
            lane.later(lease.room, result.resumeInMs + 1);
        }
      } catch (err) {
        this.options.log.error(
          { err, room: lease.room },
          "room run failed; its lease will expire and it is taken over",
        );
      } finally {
        if (this.held.get(lease.room) === entry) this.held.delete(lease.room);
        if (lane.afterRun.delete(lease.room) && !this.stopping) lane.ready.add(lease.room);
        lane.signal();
      }
    })();
  }

  /** Hands a held room back: its lease freed and the room pending again, for any worker. */
  private async letGo(lease: RoomLease): Promise<void> {
    await lease
      .release()
      .catch((err: unknown) =>
        this.options.log.warn({ err, room: lease.room }, "could not hand the room back; its lease expires"),
      );
  }
}
