import { describe, expect, it } from "vitest";
import { RestartPolicy } from "../../src/namespace/restart-policy.js";

/** When a crashed namespace server may start again, on a clock the test moves. */
describe("RestartPolicy", () => {
  it("backs off exponentially while the server dies without answering anything", () => {
    let now = 0;
    const policy = new RestartPolicy({ now: () => now });
    const waits: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      policy.started();
      now += 100;
      waits.push(policy.failed());
      now += waits.at(-1)!;
    }
    expect(waits).toEqual([250, 500, 1000, 2000, 4000]);
  });

  it("starts over after a server that answered a call crashes (poison messages among good ones)", () => {
    let now = 0;
    const policy = new RestartPolicy({ now: () => now });
    const waits: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      policy.started();
      now += 100;
      policy.answered();
      waits.push(policy.failed());
      now += waits.at(-1)!;
    }
    expect(waits).toEqual([250, 250, 250, 250, 250]);
    // Answers before the server was started again count for nothing.
    policy.answered();
    expect(policy.failed()).toBe(500);
  });
});
