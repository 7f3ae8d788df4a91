import type { DuplicateCauses } from "../support/duplicate-causes.js";
import type { RangeReport } from "../support/range-analysis.js";
import type { DeliveryReport } from "../support/send-analysis.js";
import type { Scenario } from "./scenarios.js";

/** One scenario's outcome, as the fault script's table shows it. */
export interface Row extends DeliveryReport, DuplicateCauses {
  scenario: Scenario;
  /** How the updates reached `start`: getUpdates, or posts to its webhook. */
  transport: "polling" | "webhook";
  /** From the fault to the topology taking writes again by itself (a promotion, the fault's end), ms. */
  promotionMs: number;
  /** From the fault to the new master taking a write, ms (NaN where the fault has no new master). */
  writableMs: number;
  /** The longest time the bot sent nothing at all, between its first and last send, ms: how long answers stopped flowing. */
  silentMs: number;
  /** Failovers the sentinels made after the first (promote s is of the last). */
  laterPromotions: number;
  tooMany: number;
  /** Replies to messages other than poison ones that were not their echo (an error line). */
  bystanderErrors: number;
  bystanderSample: string[];
  /** range-down: the rooms outside the range down and in it (undefined for other scenarios). */
  range: RangeReport | undefined;
  passed: boolean;
}

const HEAD = [
  "scenario",
  "transport",
  "turns",
  "lost",
  "dup",
  "resent-unknown",
  "order",
  "<1s/chat",
  "min gap ms",
  "max/s",
  "bot>30/s",
  "grp>20/min",
  "429s",
  "bystander err",
  "promote s",
  "writable s",
  "silent s",
  "live silent s",
  "stall s",
  "drain s",
  "result",
];

/** One row of the table, as printed. */
export function cells(r: Row, toleranceMs: number): string[] {
  return [
    r.scenario,
    r.transport,
    String(r.turns),
    String(r.lost),
    String(r.unexplained),
    String(r.resentAfterUnknown),
    String(r.outOfOrder),
    `${r.chatGapsUnder1s} (${r.chatGapViolations} <${1000 - toleranceMs})`,
    r.minChatGapMs.toFixed(0),
    String(r.maxBotPerSecond),
    String(r.botRateViolations),
    String(r.groupRateViolations),
    String(r.tooMany),
    String(r.bystanderErrors),
    `${(r.promotionMs / 1000).toFixed(1)}${r.laterPromotions > 0 ? ` (${r.laterPromotions + 1} failovers)` : ""}`,
    (r.writableMs / 1000).toFixed(1),
    (r.silentMs / 1000).toFixed(1),
    r.range
      ? `${(r.range.liveSilentMs / 1000).toFixed(1)}` +
        (Number.isNaN(r.range.liveChatsStallMs)
          ? ""
          : ` (chats ${(r.range.liveChatsStallMs / 1000).toFixed(1)}` +
            (Number.isNaN(r.range.liveGroupsStallMs)
              ? ")"
              : `, groups ${(r.range.liveGroupsStallMs / 1000).toFixed(1)})`)) +
        (r.range.botSlotDown ? " (bot slot down)" : "")
      : "-",
    (r.longestStallMs / 1000).toFixed(1),
    (r.drainMs / 1000).toFixed(1),
    r.passed ? "PASS" : "FAIL",
  ];
}

/** Prints the table of every scenario run, and what its columns mean. */
export function printTable(rows: Row[], toleranceMs: number): void {
  const table = [HEAD, ...rows.map((r) => cells(r, toleranceMs))];
  const widths = HEAD.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  console.log(table.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ")).join("\n"));
  console.log(
    [
      "dup: replies sent more than once that no kill explains; a failure.",
      "promote s: from the fault to the topology taking writes again by itself (a promotion, or the fault's end);",
      "  after a second failover by the sentinels, to the last promotion (the count in brackets).",
      "writable s: from the fault to the new master taking a write (min-replicas-to-write: once a replica follows it).",
      "silent s: the longest time the bot sent nothing at all (answers stopped flowing; target: promote + 5 s).",
      "live silent s: range-down: the longest time, while the range was down, that no chat outside it got a send",
      "  (FAIL above 5 s); in brackets the longest a chat outside it waited for a reply then (FAIL above 10 s), and a group.",
      "stall s: the longest time any chat had an unanswered message and got no reply (backlog included: the load is 50/s, the bot's limit 30/s).",
      "bystander err: replies to messages other than the poison ones that were not their answer (an error line).",
      "resent-unknown: replies sent again because the worker holding the room was killed after the",
      "  request left and before the part was recorded sent (it logged that resend, naming the killed",
      "  worker's attempt); allowed: the at-least-once window of the delivery guarantee in docs/reliability.md.",
    ].join("\n"),
  );
}
