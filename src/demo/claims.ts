import type { Run } from "./fixtures.js";
import { METRICS } from "./fixtures.js";

/** One number a draft states about a recorded run, e.g. "kd-0.5 reached 7.9 WER". */
export interface Claim {
  readonly run: Run;
  readonly metric: string;
  /** The number exactly as written in the draft, so the match respects its precision. */
  readonly written: string;
}

const NUMBER = String.raw`(\d+(?:\.\d+)?)`;
const METRIC_NAME = `(${Object.keys(METRICS).join("|")}|latency)`;
// "7.9 WER", "7.9% WER" or "WER of 7.9", "WER = 7.9", "WER: 7.9".
const VALUE_THEN_METRIC = new RegExp(String.raw`${NUMBER}\s*%?\s*${METRIC_NAME}\b`, "gi");
const METRIC_THEN_VALUE = new RegExp(String.raw`\b${METRIC_NAME}\s*(?:of|=|:|is|was|at)?\s*${NUMBER}`, "gi");

function metricKey(name: string): string {
  const lower = name.toLowerCase();
  return lower === "latency" ? "latency_ms" : lower;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

interface Mention {
  readonly index: number;
  readonly end: number;
}

/** Finds arm names as whole tokens (so "kd-0.5" is not found inside "kd-0.55"). */
function armMentions(sentence: string, runs: readonly Run[]): (Mention & { run: Run })[] {
  const found: (Mention & { run: Run })[] = [];
  // Longest names first, so an arm whose name contains another's is claimed by the longer one.
  for (const run of runs.toSorted((a, b) => b.arm.length - a.arm.length)) {
    const pattern = new RegExp(String.raw`(?<![\w.-])${escapeRegExp(run.arm)}(?![\w-]|\.\d)`, "gi");
    for (const match of sentence.matchAll(pattern)) {
      const index = match.index;
      if (found.some((other) => index < other.end && other.index < index + run.arm.length)) continue;
      found.push({ run, index, end: index + run.arm.length });
    }
  }
  return found.toSorted((a, b) => a.index - b.index);
}

/** Blanks the arm names out so the digits inside "kd-0.5" or "lr-3e-4" are not read as values. */
function maskMentions(sentence: string, mentions: readonly Mention[]): string {
  let masked = sentence;
  for (const { index, end } of mentions)
    masked = masked.slice(0, index) + " ".repeat(end - index) + masked.slice(end);
  return masked;
}

function valueMentions(text: string): (Mention & { metric: string; written: string })[] {
  const values = [...text.matchAll(VALUE_THEN_METRIC)].map((m) => ({
    index: m.index,
    end: m.index + m[0].length,
    written: m[1] ?? "",
    metric: metricKey(m[2] ?? ""),
  }));
  for (const m of text.matchAll(METRIC_THEN_VALUE)) {
    const index = m.index;
    if (values.some((other) => index < other.end && other.index < index + m[0].length)) continue;
    values.push({ index, end: index + m[0].length, written: m[2] ?? "", metric: metricKey(m[1] ?? "") });
  }
  return values.toSorted((a, b) => a.index - b.index);
}

/** Claims in prose: each value belongs to the nearest arm named before it in the sentence (else the next one). */
function proseClaims(sentence: string, runs: readonly Run[]): Claim[] {
  const arms = armMentions(sentence, runs);
  if (arms.length === 0) return [];
  return valueMentions(maskMentions(sentence, arms)).flatMap((value) => {
    const owner =
      arms.findLast((arm) => arm.end <= value.index) ?? arms.find((arm) => arm.index >= value.end);
    return owner === undefined ? [] : [{ run: owner.run, metric: value.metric, written: value.written }];
  });
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((cell) => cell.trim());
}

/** Claims in a Markdown table: the header names the metrics, each row names an arm. */
function tableClaims(lines: readonly string[], runs: readonly Run[]): Claim[] {
  const [header, ...rows] = lines.filter((line) => !/^\s*\|?[\s:|-]+\|?\s*$/.test(line)).map(cells);
  if (header === undefined) return [];
  const metricOf = header.map((cell) => {
    const name = new RegExp(`^${METRIC_NAME}`, "i").exec(cell)?.[1];
    return name === undefined ? undefined : metricKey(name);
  });
  return rows.flatMap((row) => {
    const run = runs.find((candidate) =>
      row.some((cell) => cell.toLowerCase() === candidate.arm.toLowerCase()),
    );
    if (run === undefined) return [];
    return row.flatMap((cell, column) => {
      const metric = metricOf[column];
      const written = new RegExp(`^${NUMBER}\\s*%?$`).exec(cell)?.[1];
      return metric === undefined || written === undefined ? [] : [{ run, metric, written }];
    });
  });
}

/** Parses the claims a Markdown draft makes about recorded runs, in order of appearance. */
export function parseClaims(draft: string, runs: readonly Run[]): Claim[] {
  const claims: Claim[] = [];
  let table: string[] = [];
  const flushTable = (): void => {
    claims.push(...tableClaims(table, runs));
    table = [];
  };
  for (const line of draft.split(/\r?\n/)) {
    if (line.trim().startsWith("|")) {
      table.push(line);
      continue;
    }
    flushTable();
    // A sentence ends at . ! ? followed by space, so "7.9" and "kd-0.5" stay whole.
    for (const sentence of line.split(/(?<=[.!?])\s+/)) claims.push(...proseClaims(sentence, runs));
  }
  flushTable();
  return claims;
}

/** Whether the recorded value, rounded to the precision the draft wrote, equals the draft's number. */
export function claimMatches(claim: Claim): boolean {
  const recorded = claim.run.metrics[claim.metric];
  if (recorded === undefined) return false;
  const decimals = claim.written.split(".")[1]?.length ?? 0;
  return recorded.toFixed(decimals) === Number(claim.written).toFixed(decimals);
}
