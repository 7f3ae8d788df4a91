import { describe, expect, it } from "vitest";
import type { RecordedSend, ReleasedMessage } from "../../bench/support/bot-api-standin.js";
import { classifyDuplicates, parseResentLines } from "../../bench/support/duplicate-causes.js";

// Two lines as real roomgate processes wrote them in test/scheduler/kill-worker.system.test.ts:
// pid 18236 computed the turn and was killed after its send left; pid 18270 resent the part.
const KILLED_LOG =
  '{"level":30,"time":1796118687588,"pid":18236,"hostname":"vm","name":"roomgate","turn":"tg:7000000000:100294","room":"telegram:7000000000:901","kind":"message","ms":29,"msg":"turn computed"}';
const RESENT_LOG = [
  "roomgate worker started (not JSON: skipped)",
  '{"level":30,"time":1796118689579,"pid":18270,"hostname":"vm","name":"roomgate","turn":"tg:7000000000:100294","room":"telegram:7000000000:901","part":"part:0","earlierAttemptAt":1796118687591,"earlierAttemptBy":"vm/18236/56995a68","msg":"an earlier attempt of this part has no recorded answer; sending it again"}',
].join("\n");

const BOT = 7_000_000_000;
const released: ReleasedMessage[] = [
  { token: "t", chatId: 901, text: "m901.0", availableAt: 0, updateId: 100_294 },
  { token: "t", chatId: 901, text: "m901.1", availableAt: 0, updateId: 100_295 },
];
const send = (text: string, at: number): RecordedSend => ({ token: "t", chatId: 901, text, at });
const KILL = { name: "worker-1", pid: 18_236, at: 1_796_118_688_000 };

describe("the fault script's reading of a duplicated reply", () => {
  it("reads only the resend lines, with their turn, part and earlier attempt, from a real log", () => {
    expect(parseResentLines(KILLED_LOG)).toEqual([]);
    expect(parseResentLines(RESENT_LOG)).toEqual([
      {
        time: 1_796_118_689_579,
        turn: "tg:7000000000:100294",
        part: "part:0",
        earlierAttemptAt: 1_796_118_687_591,
        earlierAttemptBy: "vm/18236/56995a68",
      },
    ]);
  });

  it("allows a resend after the earlier attempt's worker was killed between send and record", () => {
    const causes = classifyDuplicates({
      botId: BOT,
      released,
      sends: [send("m901.0", 1), send("m901.0", 2), send("m901.1", 3)],
      resent: parseResentLines(RESENT_LOG),
      kills: [KILL],
    });
    expect(causes).toEqual({ resentAfterUnknown: 1, unexplained: 0, unexplainedSample: [] });
  });

  it("counts a duplicate as unexplained when no kill, a kill before the attempt, or another turn's line is all there is", () => {
    const sends = [send("m901.0", 1), send("m901.0", 2)];
    const resent = parseResentLines(RESENT_LOG);
    for (const kills of [
      [],
      [{ ...KILL, pid: 99 }],
      [{ ...KILL, at: 1_796_118_687_000 }],
      [{ ...KILL, at: 1_796_118_690_000 }],
    ]) {
      expect(classifyDuplicates({ botId: BOT, released, sends, resent, kills }).unexplained).toBe(1);
    }
    const other = classifyDuplicates({
      botId: BOT,
      released,
      sends: [send("m901.1", 1), send("m901.1", 2)],
      resent,
      kills: [KILL],
    });
    expect(other).toEqual({ resentAfterUnknown: 0, unexplained: 1, unexplainedSample: ["m901.1"] });
  });

  it("explains one extra copy per resend line: a third copy stays unexplained", () => {
    const causes = classifyDuplicates({
      botId: BOT,
      released,
      sends: [send("m901.0", 1), send("m901.0", 2), send("m901.0", 3)],
      resent: parseResentLines(RESENT_LOG),
      kills: [KILL],
    });
    expect(causes).toEqual({ resentAfterUnknown: 1, unexplained: 1, unexplainedSample: ["m901.0"] });
  });
});
