import type { Logger } from "../core/log.js";
import type { RedisClient } from "../sessions/redis-connection.js";
import { INACTIVE_RECHECK_MS, type LaneState } from "./lane-state.js";
import type { SchedulerScripts } from "./scheduler-scripts.js";
import { within } from "./cluster-nodes.js";

/** Rooms of each kind one look at a shard returns. */
const PEEK_LIMIT = 32;

/**
 * Where a lane's rooms to claim come from (its `ready` set): the lane's wake list
 * (rooms that became pending, any shard), popped by one blocked connection while
 * this process has free slots, and a look at every shard of the lane for due rooms
 * and expired leases (takeover), which also sets a timer for the next due one. The
 * dispatch loop (src/scheduler/room-worker.ts) claims what they add.
 */
export class LaneFeed {
  constructor(
    private readonly options: {
      scripts: SchedulerScripts;
      /** How often a lane looks at every shard at least, and how long one pop blocks. */
      peekEveryMs: number;
      /** The lane's slots free for new rooms in this process. */
      free: (lane: LaneState) => number;
      stopping: () => boolean;
      /** Called when Redis answered a pop or a look, for health. */
      answered: () => void;
      log: Logger;
    },
  ) {}

  /** Pops the lane's wake list while this process has a free slot for what it pops. */
  async listen(lane: LaneState, blocker: RedisClient): Promise<void> {
    const { scripts, peekEveryMs, free, stopping } = this.options;
    while (!stopping()) {
      if (!lane.active()) {
        await lane.wait(INACTIVE_RECHECK_MS);
        continue;
      }
      if (free(lane) <= lane.ready.size) {
        await lane.wait(peekEveryMs);
        continue;
      }
      try {
        // As many rooms as this process has free slots for, in the order they became pending.
        const got = await scripts.popWoken(blocker, lane.name, free(lane) - lane.ready.size, peekEveryMs);
        if (got) for (const room of got) lane.ready.add(room);
        else lane.lastPeek = 0;
        lane.signal();
      } catch {
        if (stopping()) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  /**
   * Starts a look at every shard (`peek`) when one is due and none runs. It runs beside
   * the dispatch loop's claims: a shard out of reach holds it for up to `peekEveryMs`,
   * and what the wake-up list and the other shards gave is claimed meanwhile.
   */
  lookIfDue(lane: LaneState): void {
    if (lane.peeking || Date.now() - lane.lastPeek < this.options.peekEveryMs) return;
    lane.peeking = true;
    void this.peek(lane).finally(() => {
      lane.peeking = false;
      lane.signal();
    });
  }

  /**
   * Looks at every shard of the lane for due rooms and expired leases, each shard's
   * rooms made ready as soon as it answers, and sets a timer for the next due. It waits
   * for the shards at most `peekEveryMs`: a call to a shard whose slot range is down can
   * go unanswered for seconds (the client retrying), and neither the next look nor the
   * claims of what the others answered may wait for it (RoomWorker runs a look beside
   * its claims).
   */
  async peek(lane: LaneState): Promise<void> {
    const { scripts, log, peekEveryMs } = this.options;
    lane.lastPeek = Date.now();
    let next: number | undefined;
    let answered = 0;
    let refusal: Error | undefined;
    const looks = Array.from({ length: scripts.keys.shards }, (_, shard) =>
      scripts.peek({ lane: lane.name, shard, limit: PEEK_LIMIT }).then(
        (look) => {
          answered += 1;
          for (const room of [...look.due, ...look.expired]) lane.ready.add(room);
          if (look.due.length + look.expired.length > 0) lane.signal();
          // A room this process will resume on its own timer needs no look of every shard
          // (a room waiting for its send slot costs nothing until then); the periodic look
          // still finds anything else in that shard.
          const { nextInMs, nextRoom } = look;
          if (nextInMs !== undefined && !(nextRoom && lane.resuming.has(nextRoom)))
            next = Math.min(next ?? Infinity, nextInMs);
        },
        (err: unknown) => {
          refusal ??= err as Error;
        },
      ),
    );
    await within(Promise.all(looks), peekEveryMs);
    const failed = looks.length - answered;
    if (failed === 0) this.options.answered();
    else {
      if (this.options.stopping()) return;
      log.warn(
        { err: refusal?.message ?? `no answer within ${peekEveryMs} ms`, lane: lane.name, shards: failed },
        "looking for due rooms failed; retrying",
      );
      // The shards that answered are worked meanwhile; the rest are looked at again on the next look.
      if (answered === 0) {
        await new Promise((r) => setTimeout(r, 500));
        return;
      }
    }
    clearTimeout(lane.peekTimer);
    if (next !== undefined && next < peekEveryMs) {
      lane.peekTimer = setTimeout(() => {
        lane.lastPeek = 0;
        lane.signal();
      }, next + 1);
      lane.peekTimer.unref();
    }
  }
}
