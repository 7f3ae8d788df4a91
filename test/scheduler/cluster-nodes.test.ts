import { describe, expect, it } from "vitest";
import { ownerFailed } from "../../src/scheduler/cluster-nodes.js";

/** CLUSTER NODES as Redis 7 prints it: the bot's slot (11289) is on the third master. */
const nodes = (third: string) =>
  [
    "a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460",
    "b2 127.0.0.1:7001@17001 master - 0 1796340000000 2 connected 5461-10922",
    `c3 127.0.0.1:7002@17002 ${third} - 1796340000000 1796340000000 3 disconnected 10923-16383`,
    "d4 127.0.0.1:7003@17003 slave c3 0 1796340000000 3 connected",
    "",
  ].join("\n");

describe("whether the cluster marks the bot's slot's master failed (the fallback's entry)", () => {
  it("is true only once the masters agreed (fail), not on one node's suspicion (fail?)", () => {
    expect(ownerFailed(nodes("master,fail"), 11289)).toBe(true);
    expect(ownerFailed(nodes("master,fail?"), 11289)).toBe(false);
    expect(ownerFailed(nodes("master"), 11289)).toBe(false);
  });

  it("looks at the master owning the slot, and ignores slots being migrated", () => {
    expect(ownerFailed(nodes("master,fail"), 42)).toBe(false);
    const migrating = nodes("master,fail").replace("5461-10922", "5461-10922 [11289->-c3]");
    expect(ownerFailed(migrating, 11289)).toBe(true);
    expect(ownerFailed(nodes("master,fail").replace("10923-16383", "10923 11289"), 11289)).toBe(true);
  });
});
