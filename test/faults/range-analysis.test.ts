import { describe, expect, it } from "vitest";
import { chatSlot, rangeReport } from "../../bench/support/range-analysis.js";

/**
 * The fault script's range-down figures: how long a chat outside the range down (a
 * group, and any chat) waited for a reply while it was down. A group with nothing left to answer is not
 * waiting; a wait that began before the fault counts from the fault; a wait that began
 * while the range was down counts to its reply, however late.
 */
describe("range-down: a live group's wait", () => {
  const group = -1_000_001;
  const report = (messages: number[], replies: number[]) =>
    rangeReport(
      replies.map((at) => ({ at, chatId: group })),
      {
        botId: 1,
        chats: [group, 10_000],
        ranges: [],
        faultAt: 10_000,
        backAt: 30_000,
        released: messages.map((availableAt) => ({ availableAt, chatId: group })),
      },
    ).liveGroupsStallMs;

  it("counts from the fault a wait that began before it, to the reply", () => {
    expect(report([9_000], [14_000])).toBe(4_000);
  });

  it("does not count the time a group had nothing to answer", () => {
    expect(report([9_000, 12_000], [9_500, 13_000])).toBe(1_000);
  });

  it("counts a wait to its reply after the range is back, and one reply of two ends it", () => {
    expect(report([25_000, 26_000], [28_000, 90_000])).toBe(62_000);
  });

  it("measures private chats outside the range with the groups, and leaves out those in it", () => {
    const live = 10_000;
    const dead = 10_001;
    const slot = chatSlot(1, dead);
    const both = rangeReport(
      [
        { at: 14_000, chatId: group },
        { at: 22_000, chatId: live },
        { at: 40_000, chatId: dead },
      ],
      {
        botId: 1,
        chats: [group, live, dead],
        ranges: [[slot, slot]],
        faultAt: 10_000,
        backAt: 30_000,
        released: [group, live, dead].map((chatId) => ({ availableAt: 11_000, chatId })),
      },
    );
    expect(both.liveGroupsStallMs).toBe(3_000);
    expect(both.liveChatsStallMs).toBe(11_000);
  });

  it("is not a number without a group outside the range", () => {
    const none = rangeReport([], {
      botId: 1,
      chats: [10_000],
      ranges: [],
      faultAt: 0,
      backAt: 1,
      released: [],
    });
    expect(none.liveGroupsStallMs).toBeNaN();
  });
});
