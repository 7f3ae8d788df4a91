import { within } from "./cluster-nodes.js";
import type { LaneState } from "./lane-state.js";

/** How long after a failed claim a shard's rooms wait before one is claimed again. */
const AWAY_MS = 1000;

/** How long the dispatch loop waits for one claim (a few ms when its shard is in reach) before it goes on. */
const CLAIM_WAIT_MS = 500;

/**
 * How often a room of a shard whose claim is still unanswered looks again (no call):
 * a claim slow only on a loaded machine is answered soon after, and its shard's rooms
 * should not wait a whole AWAY_MS for it.
 */
const RECHECK_MS = 250;

/**
 * Which shards a lane's claims found out of reach (their Cluster slot range down): a
 * claim there can go unanswered for seconds while the client retries, and the other
 * rooms of that shard would each hold the dispatch loop as long. Their rooms wait
 * instead, without a call, while one claim there is unanswered and for AWAY_MS after
 * it failed; the next claim there, after that, asks again.
 */
export class ShardReach {
  /** Shard → until when (local ms) its rooms are not claimed; Infinity while a claim there is unanswered. */
  private readonly away = new Map<number, number>();

  /**
   * Runs one claim in `shard` (`attempt`: false when Redis did not answer it), waiting
   * for it at most CLAIM_WAIT_MS, so that the lane's other rooms are claimed meanwhile.
   * Past that wait it no longer counts against the lane's slots (one answered late runs
   * its room beside them), and the shard's rooms wait until it is answered.
   */
  async claim(lane: LaneState, shard: number, attempt: () => Promise<boolean>): Promise<void> {
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      lane.claiming -= 1;
      lane.signal();
    };
    lane.claiming += 1;
    const claimed = attempt().then((answered) => {
      this.settled(shard, answered);
      uncount();
      return true;
    });
    if ((await within(claimed, CLAIM_WAIT_MS)) === undefined) {
      this.away.set(shard, Infinity);
      uncount();
    }
  }

  /** How long a room of `shard` waits before it is claimed (0: claim it now). */
  waitMs(shard: number): number {
    const until = this.away.get(shard);
    if (until === undefined) return 0;
    if (until === Infinity) return RECHECK_MS;
    const left = until - Date.now();
    if (left <= 0) this.away.delete(shard);
    return Math.max(0, left);
  }

  /** A claim in `shard` was answered (the shard is in reach) or failed. */
  private settled(shard: number, answered: boolean): void {
    if (answered) this.away.delete(shard);
    else this.away.set(shard, Date.now() + AWAY_MS);
  }
}
