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
import type { TurnRunner } from "./turn-runner.js";
import { HeldRooms } from "./held-rooms.js";
import { ShardReach } from "./shard-reach.js";
import { within } from "./cluster-nodes.js";
import { takeoverGraceMs, writeRefusals } from "./write-refusals.js";

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
  private readonly held: HeldRooms;
  private readonly lanes = new Map<string, LaneState>();
  private readonly blockers: RedisClient[] = [];
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  private seq = 0;
  private readonly peekEveryMs: number;
  private readonly feed: LaneFeed;
  private readonly reach = new ShardReach();
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
    this.held = new HeldRooms({
      runner: options.runner,
      concurrency: options.concurrency,
      leaseMs: options.leaseMs,
      stopping: () => this.stopping,
      log: options.log,
    });
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
    return this.held.leases();
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
    await within(this.held.done(), graceMs);
    await within(Promise.all(this.loops), 100);
    const left = this.held.leases();
    await within(Promise.all(left.map((lease) => this.held.letGo(lease))), LET_GO_MS);
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
      claim: { token, leaseMs, turnRecordMs, ...this.takeoverHold() },
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

  /**
   * While Redis refused writes lately (as this process saw), a room whose lease expired is
   * left to its holder for takeoverGraceMs after the last refusal: the holder could not renew
   * either, and renews first once Redis takes writes (LeaseRenewals retries soon after a
   * refusal). A takeover after a crash with Redis fine is not delayed.
   */
  private takeoverHold(): { takeoverHoldMs?: number } {
    const ms = writeRefusals.takeoverHoldMs(takeoverGraceMs(this.options.leaseMs));
    return ms > 0 ? { takeoverHoldMs: ms } : {};
  }

  private free(lane: LaneState): number {
    return this.options.concurrency - lane.claiming - this.held.busy(lane.name);
  }

  private nextToken(): string {
    return `${this.id}:${(this.seq += 1)}`;
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
      this.feed.lookIfDue(lane);
      const room = lane.ready.values().next().value;
      if (room === undefined) {
        await lane.wait(lane.peeking ? this.peekEveryMs : this.peekEveryMs - (Date.now() - lane.lastPeek));
        continue;
      }
      lane.ready.delete(room);
      if (this.held.has(room)) {
        lane.afterRun.add(room);
        continue;
      }
      const shard = this.options.scripts.keys.shardOf(room);
      const awayMs = this.reach.waitMs(shard);
      if (awayMs > 0) lane.later(room, awayMs);
      else await this.reach.claim(lane, shard, () => this.claim(lane, room));
    }
  }

  /** One claim; false when Redis did not answer it (the room is tried again later). */
  private async claim(lane: LaneState, room: string): Promise<boolean> {
    const { scripts, log, leaseMs, turnRecordMs } = this.options;
    const token = this.nextToken();
    try {
      const reply = await scripts.claim({
        room,
        lane: lane.name,
        token,
        leaseMs,
        turnRecordMs,
        ...this.takeoverHold(),
      });
      this.lastClaimAt = Date.now();
      if (reply.kind === "claimed") {
        this.take(lane, room, token, reply);
      } else if (reply.kind === "later") {
        lane.later(room, reply.dueInMs + 1);
      }
      return true;
    } catch (err) {
      if (this.stopping) return false;
      log.warn({ err: (err as Error).message, lane: lane.name, room }, "claim failed; retrying");
      lane.later(room, 500);
      return false;
    }
  }

  /** Runs a room claimed under `token`; one claimed while stopping is handed back at once. */
  private take(lane: LaneState, room: string, token: string, reply: Claimed): void {
    const { scripts, leaseMs, turnRecordMs } = this.options;
    const lease = new RoomLease(scripts, room, lane.name, token, { leaseMs, turnRecordMs });
    if (this.stopping) {
      void this.held.letGo(lease);
      return;
    }
    this.held.run(lane, lease, {
      head: reply.head,
      session: reply.session,
      record: reply.record,
      now: reply.now,
    });
  }
}
