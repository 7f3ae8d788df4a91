import { describe, expect, it } from "vitest";
import { analyse, messageText } from "../../bench/support/send-analysis.js";

/**
 * The bench's latency split: how long a message waited before the bot had it (the
 * stand-in's getUpdates answer or webhook post) and how long the bot took from then
 * to its reply, so a slower arm shows where its time goes.
 */
describe("a reply's latency, split at the hand-over", () => {
  const chatId = 20_000;
  const message = (seq: number, availableAt: number, handedAt?: number) => ({
    token: "1:a",
    chatId,
    text: messageText(chatId, seq),
    availableAt,
    updateId: seq + 1,
    ...(handedAt === undefined ? {} : { handedAt }),
  });
  const reply = (seq: number, at: number) => ({ token: "1:a", chatId, text: messageText(chatId, seq), at });

  it("splits each answered message's latency at the moment the bot had it", () => {
    const report = analyse(
      [message(0, 1_000, 1_003), message(1, 3_000, 3_001)],
      [reply(0, 1_010), reply(1, 4_501)],
    );
    expect(report.latencies).toEqual([10, 1_501]);
    expect(report.toBot).toEqual([1, 3]);
    expect(report.inBot).toEqual([7, 1_500]);
  });

  it("leaves a message that was never handed over, or never answered, out of the split", () => {
    const report = analyse([message(0, 1_000), message(1, 3_000, 3_002)], [reply(0, 1_010)]);
    expect(report.latencies).toEqual([10]);
    expect(report.toBot).toEqual([]);
    expect(report.inBot).toEqual([]);
    expect(report.lost).toBe(1);
  });
});
