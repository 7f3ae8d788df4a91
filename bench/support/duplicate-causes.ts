import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordedSend, ReleasedMessage } from "./bot-api-standin.js";
import type { KillRecord } from "./roomgate-fleet.js";

/** The message roomgate logs when it sends a part whose earlier attempt has no recorded answer. */
export const RESENT_MSG = "an earlier attempt of this part has no recorded answer; sending it again";

/** One such log line, as the classifier needs it. */
export interface ResentLine {
  /** Wall-clock ms of the line. */
  time: number;
  turn: string;
  part: string;
  /** Redis ms at which the earlier attempt took its send slot. */
  earlierAttemptAt: number;
  /** The worker that made the earlier attempt: `host/pid/random`. */
  earlierAttemptBy: string;
}

/** Duplicated deliveries split by whether the at-least-once window explains them. */
export interface DuplicateCauses {
  /** Extra copies a worker resent after the attempt's holder was killed between send and record. */
  resentAfterUnknown: number;
  /** Every other extra copy. */
  unexplained: number;
  unexplainedSample: string[];
}

/** Reads the resent lines from every `*.log` file of a folder (the processes' JSON logs). */
export function readResentLines(dir: string): ResentLine[] {
  const lines: ResentLine[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".log"))) {
    lines.push(...parseResentLines(readFileSync(join(dir, file), "utf8")));
  }
  return lines;
}

/** The resent lines of one JSON log; other lines and non-JSON output are skipped. */
export function parseResentLines(text: string): ResentLine[] {
  const lines: ResentLine[] = [];
  for (const raw of text.split("\n")) {
    if (!raw.includes(RESENT_MSG)) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      continue;
    }
    const { time, turn, part, earlierAttemptAt, earlierAttemptBy } = entry;
    if (
      entry.msg === RESENT_MSG &&
      typeof time === "number" &&
      typeof turn === "string" &&
      typeof part === "string" &&
      typeof earlierAttemptAt === "number" &&
      typeof earlierAttemptBy === "string"
    ) {
      lines.push({ time, turn, part, earlierAttemptAt, earlierAttemptBy });
    }
  }
  return lines;
}

/** The process id inside a worker id (`host/pid/random`), NaN when it has none. */
function pidOf(workerId: string): number {
  return Number(workerId.split("/").at(-2));
}

/**
 * Splits the duplicated replies: an extra copy of a message's reply counts as
 * "resent after an unknown outcome" only when a worker logged the resent line for
 * that very turn, and the earlier attempt it names was made by a process that was
 * then killed (kill after the attempt's slot, resent line after the kill). Every
 * other extra copy is an unexplained duplicate. Each line explains one copy.
 */
export function classifyDuplicates(input: {
  botId: number;
  released: ReleasedMessage[];
  sends: RecordedSend[];
  resent: ResentLine[];
  kills: KillRecord[];
}): DuplicateCauses {
  const copies = new Map<string, number>();
  for (const s of input.sends) {
    const key = /m(-?\d+)\.(\d+)/.exec(s.text);
    if (key && Number(key[1]) === s.chatId) copies.set(key[0], (copies.get(key[0]) ?? 0) + 1);
  }
  const turnOf = new Map<string, string>();
  for (const m of input.released) {
    const key = /m-?\d+\.\d+/.exec(m.text);
    if (key) turnOf.set(key[0], `tg:${input.botId}:${m.updateId}`);
  }
  const explained = (line: ResentLine) =>
    input.kills.some(
      (k) => k.pid === pidOf(line.earlierAttemptBy) && k.at >= line.earlierAttemptAt && k.at <= line.time,
    );
  let resentAfterUnknown = 0;
  let unexplained = 0;
  const unexplainedSample: string[] = [];
  for (const [key, n] of copies) {
    if (n < 2) continue;
    const turn = turnOf.get(key);
    const lines = input.resent.filter((l) => l.turn === turn && explained(l)).length;
    const ok = Math.min(n - 1, lines);
    resentAfterUnknown += ok;
    unexplained += n - 1 - ok;
    if (n - 1 > ok && unexplainedSample.length < 10) unexplainedSample.push(key);
  }
  return { resentAfterUnknown, unexplained, unexplainedSample };
}
