import { describe, expect, it } from "vitest";
import { LaneState } from "../../src/scheduler/lane-state.js";
import { ShardReach } from "../../src/scheduler/shard-reach.js";

/**
 * A lane's claims in a shard out of reach (its Cluster slot range down): the dispatch
 * loop goes on to its other rooms instead of waiting out the client's retries, and
 * the shard's other rooms wait without a call until that claim is answered.
 */
describe("claims in a shard out of reach", () => {
  const unanswered = () => {
    let settle!: (answered: boolean) => void;
    const attempt = new Promise<boolean>((resolve) => (settle = resolve));
    return { attempt: () => attempt, settle };
  };

  it("lets the loop go on, frees the slot, and holds the shard's rooms while a claim hangs", async () => {
    const reach = new ShardReach();
    const lane = new LaneState("telegram");
    const hung = unanswered();
    await reach.claim(lane, 3, hung.attempt);
    // The loop was let go with the claim still out: its slot is free again.
    expect(lane.claiming).toBe(0);
    expect(reach.waitMs(3)).toBeGreaterThan(0);
    expect(reach.waitMs(4)).toBe(0);
    // Redis gave up on it: the shard's rooms wait a while longer, then one asks again.
    hung.settle(false);
    await Promise.resolve();
    expect(reach.waitMs(3)).toBeGreaterThan(0);
  });

  it("claims again at once in a shard whose claim was answered", async () => {
    const reach = new ShardReach();
    const lane = new LaneState("telegram");
    const late = unanswered();
    await reach.claim(lane, 5, late.attempt);
    expect(reach.waitMs(5)).toBeGreaterThan(0);
    late.settle(true);
    await Promise.resolve();
    expect(reach.waitMs(5)).toBe(0);
    // An answered claim counts against the lane's slots only while it is out.
    let counted = -1;
    await reach.claim(lane, 5, async () => {
      counted = lane.claiming;
      return true;
    });
    expect(counted).toBe(1);
    expect(lane.claiming).toBe(0);
    expect(reach.waitMs(5)).toBe(0);
  });
});
