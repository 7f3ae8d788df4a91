import { cronProblem, isTimeZone, parseDuration } from "../core/config/proactive.js";
import type { RoomRepeat } from "./room-proactive.js";

/** What `/schedule add …` asks for: how it repeats and the question, or why it cannot be read. */
export type ScheduleSpec = { repeat: RoomRepeat; ask: string } | { problem: string };

const CRON_FIELD = /^[\d*/,?LW#A-Za-z-]+$/;

/**
 * Reads the rest of `/schedule add`: `every 30m <question>` (or just `30m <question>`),
 * or a cron pattern of 5 fields (6 with seconds first), optionally `tz=<zone>`, then
 * the question: `/schedule add 0 8 * * 1-5 tz=Europe/Berlin what should I read today?`.
 */
export function parseScheduleSpec(rest: string): ScheduleSpec {
  const words = rest.trim().split(/\s+/).filter(Boolean);
  const usage =
    "Usage: /schedule add every 30m <question>, or /schedule add <cron, 5 fields> [tz=Europe/Berlin] <question>.";
  if (words.length === 0) return { problem: usage };
  let at = words[0]!.toLowerCase() === "every" ? 1 : 0;
  const every = words[at] === undefined ? undefined : parseDuration(words[at]!);
  if (every !== undefined) return withAsk({ every }, words.slice(at + 1), usage);
  if (at === 1) return { problem: `"${words[1] ?? ""}" is not an interval like 30m, 2h or 1h30m.` };
  const fields: string[] = [];
  while (at < words.length && fields.length < 6 && CRON_FIELD.test(words[at]!) && !words[at]!.includes("=")) {
    fields.push(words[at]!);
    at += 1;
  }
  // Six cron-like words may be five fields and a question's first word: keep six only if they parse.
  if (fields.length === 6 && cronProblem(fields.join(" ")) !== undefined) {
    fields.pop();
    at -= 1;
  }
  if (fields.length < 5) return { problem: usage };
  let tz: string | undefined;
  const zone = /^tz=(.+)$/i.exec(words[at] ?? "");
  if (zone) {
    if (!isTimeZone(zone[1]!)) return { problem: `"${zone[1]}" is not a time zone (e.g. Europe/Berlin).` };
    tz = zone[1]!;
    at += 1;
  }
  const pattern = fields.join(" ");
  const problem = cronProblem(pattern, tz);
  if (problem) return { problem: `"${pattern}" is not a cron pattern: ${problem}.` };
  return withAsk(tz ? { cron: pattern, tz } : { cron: pattern }, words.slice(at), usage);
}

function withAsk(repeat: RoomRepeat, rest: string[], usage: string): ScheduleSpec {
  const ask = rest.join(" ").trim();
  return ask === "" ? { problem: `The question is missing. ${usage}` } : { repeat, ask };
}

/** How a repeat is shown back: `every 30m` or `cron 0 8 * * 1-5 (Europe/Berlin)`. */
export function repeatText(repeat: RoomRepeat): string {
  if ("every" in repeat) return `every ${durationText(repeat.every)}`;
  return `cron ${repeat.cron}${repeat.tz ? ` (${repeat.tz})` : " (UTC)"}`;
}

/** A duration in the largest units that fit: `1h30m`, `2s`. */
export function durationText(ms: number): string {
  const parts: string[] = [];
  let left = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
  }
  return parts.join("") || `${ms}ms`;
}
