import { RoomShards } from "./room-shards.js";

/** The keys of one room, all in its shard's hash slot, so that one script can touch them together. */
export interface RoomKeys {
  room: string;
  shard: number;
  inbox: string;
  lease: string;
  turn: string;
  session: string;
  history: string;
  offerRefs: string;
}

/** The scheduler's keys of one lane in one shard (in the shard's slot). */
export interface LaneShardKeys {
  lane: string;
  shard: number;
  pending: string;
  running: string;
}

/**
 * The scheduler's key layout (as bullmq's queue-keys): every key of the scheduler
 * built in one place, and only used inside src/scheduler.
 *
 * A shard's keys (src/scheduler/room-shards.ts) — its rooms' inboxes, sessions,
 * leases and turn records, its lanes' pending and running sets, its dead letters and
 * its flood counters — share one `{hash tag}`, so every scheduler script touches one
 * Redis Cluster slot, and the shards spread over the masters.
 */
export class SchedulerKeys extends RoomShards {
  /** All scheduler keys of one room. */
  room(room: string): RoomKeys {
    return {
      room,
      shard: this.shardOf(room),
      inbox: this.inbox(room),
      lease: this.lease(room),
      turn: this.turn(room),
      session: this.session(room),
      history: this.history(room),
      offerRefs: this.offerRefs(room),
    };
  }

  /** The scheduler keys of one lane in one shard. */
  laneShard(lane: string, shard: number): LaneShardKeys {
    return {
      lane,
      shard,
      pending: this.inShard(shard, `lane:${lane}:pending`),
      running: this.inShard(shard, `lane:${lane}:running`),
    };
  }

  /** The room's session record (conversation, enabled tools, offers, slot state). */
  session(room: string): string {
    return this.ofRoom(room, "session");
  }

  /** The room's capped list of recent turns. */
  history(room: string): string {
    return this.ofRoom(room, "history");
  }

  /** The room's FIFO of inbound events not yet fully handled. */
  inbox(room: string): string {
    return this.ofRoom(room, "inbox");
  }

  /** The lease a worker holds while it drains the room's inbox. */
  lease(room: string): string {
    return this.ofRoom(room, "lease");
  }

  /**
   * The record of the room's head turn while it is being delivered: its event id,
   * outcome, attempts, parts sent or being sent, and since when it waits. Deleted once delivered.
   */
  turn(room: string): string {
    return this.ofRoom(room, "turn");
  }

  /** Platform message ref → offer id, so a reaction on a sent message finds its offer. */
  offerRefs(room: string): string {
    return this.ofRoom(room, "offer-refs");
  }

  /** A notice of one kind (flood, leaving) already given to one user or room, kept while it must not repeat. */
  notice(room: string, kind: string, userId: string): string {
    return this.ofRoom(room, `notice:${kind}:${userId}`);
  }

  /**
   * Turns one person started in the current minute in rooms of the room's shard, for
   * inbound flood control: kept in the shard so that the enqueue script counts it in
   * the same atomic step (docs/reliability.md says what that means across shards).
   */
  turnRate(room: string, platformUserId: string): string {
    return this.inShard(this.shardOf(room), `turn-rate:${platformUserId}`);
  }

  /**
   * Platform event ids received lately in the rooms of one shard (a zset of "<room> <id>"
   * by Redis ms), so a redelivered event is not enqueued twice; one set per shard,
   * trimmed by each enqueue.
   */
  seen(shard: number): string {
    return this.inShard(shard, "seen");
  }

  /**
   * A lane's wake-up list: rooms (by name) that became pending, one entry each; an idle
   * worker of the lane blocks on it. One key per lane, in the lane's own slot.
   */
  wake(lane: string): string {
    return `${this.prefix}:lane:{${lane}}:wake`;
  }

  /**
   * The pub/sub channel told when an event is queued behind a room's running turn, so
   * a call waiting for a /cancel or an answer reads the inbox then (not a key: no slot).
   */
  roomSignal(room: string): string {
    return `${this.prefix}:signal:${room}`;
  }

  /** Turns of one shard that could not be delivered: id → record JSON. */
  deadLetters(shard: number): string {
    return this.inShard(shard, "dead-letters");
  }

  /** One shard's dead letters' ids by the Redis ms they were recorded. */
  deadLetterIndex(shard: number): string {
    return this.inShard(shard, "dead-letters:index");
  }

  /**
   * A sliding-window send limiter's sorted set; `group` (e.g. one bot) is the hash
   * tag, so all scopes of one bot are checked in one script on one slot.
   */
  rate(group: string, scope: string): string {
    return `${this.prefix}:rate:{${group}}:${scope}`;
  }

  /**
   * One of a shard's fallback keys for `group`'s windows (src/scheduler/window-fallback.ts):
   * a window's zset (`name` its scope), or the shard's `back`, `last`, `groups` and
   * `mirrored` marks; in the shard's slot.
   */
  fallback(shard: number, group: string, name: string): string {
    return this.rate(this.tag(shard), `fb:${group}:${name}`);
  }

  /**
   * Per receiver of `group`'s sends, when it last had every outage notice it sent without
   * a slot in the group's windows (src/scheduler/notice-marks.ts); in the windows' slot.
   */
  noticeMarks(group: string): string {
    return `${this.prefix}:rate:{${group}}:receivers`;
  }

  /** The layout this prefix was first used with (its shard count), so a changed count is refused. */
  get layout(): string {
    return `${this.prefix}:layout`;
  }
}

/** What the scheduler's keys are built from: the key prefix and the shard count (`Keys` carries both). */
export interface KeyLayout {
  readonly prefix: string;
  readonly shards: number;
}

/** The scheduler's keys of a layout (the same object when it is one already). */
export function schedulerKeysOf(layout: KeyLayout): SchedulerKeys {
  return layout instanceof SchedulerKeys
    ? layout
    : new SchedulerKeys(layout.prefix, { shards: layout.shards });
}
