import { z } from "zod";
import type { Answer, Ref } from "../core/answer.js";
import { claimMatches, parseClaims } from "./claims.js";
import { FAMILIES, METRICS, RUNS, runUrl } from "./fixtures.js";
import type { Family, Run } from "./fixtures.js";
import { answerTool, askBack, failure, runRoute, success, toolsTool, words } from "./tool.js";
import type { DemoTool, Route } from "./tool.js";

function ref(run: Run): Ref {
  return { id: run.id, url: runUrl(run) };
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Family names compare without case, spaces, dashes or underscores, so "KD sweep" finds kdsweep. */
function squash(text: string): string {
  return text.toLowerCase().replace(/[\s_-]+/g, "");
}

function findFamily(name: string): Family | undefined {
  return FAMILIES.find((family) => squash(family.name) === squash(name));
}

function metricKey(name: string): string {
  const key = name.trim().toLowerCase();
  return key === "latency" ? "latency_ms" : key;
}

const knownFamilies = FAMILIES.map((family) => family.name).join(", ");

/** All recorded runs, or one sweep's. */
export function runsList(family?: string): Answer {
  if (family === undefined || family.trim() === "") {
    const sizes = FAMILIES.map((f) => `${f.name} (${RUNS.filter((r) => r.family === f.name).length})`);
    return success(`${RUNS.length} runs in ${FAMILIES.length} sweeps: ${sizes.join(", ")}`, RUNS.map(ref));
  }
  const found = findFamily(family);
  if (found === undefined)
    return failure(`No sweep is called "${family}". Recorded sweeps: ${knownFamilies}.`);
  const runs = RUNS.filter((run) => run.family === found.name);
  return success(
    `${found.name} has ${runs.length} runs: ${runs.map((run) => run.arm).join(", ")}`,
    runs.map(ref),
  );
}

/** Ranks a sweep's arms by one metric, best first, with the sweep's known caveat unabridged. */
export function runsCompare(family: string, metric?: string): Answer {
  const found = findFamily(family);
  if (found === undefined)
    return failure(`No sweep is called "${family}". Recorded sweeps: ${knownFamilies}.`);
  const key = metric === undefined || metric.trim() === "" ? found.metric : metricKey(metric);
  const info = METRICS[key];
  if (info === undefined) {
    return failure(
      `${found.name} has no metric "${metric}". Recorded metrics: ${Object.keys(METRICS).join(", ")}.`,
    );
  }
  const sign = info.better === "lower" ? 1 : -1;
  const ranked = RUNS.filter((run) => run.family === found.name && run.metrics[key] !== undefined).toSorted(
    (a, b) => sign * ((a.metrics[key] ?? 0) - (b.metrics[key] ?? 0)),
  );
  const [best, ...rest] = ranked.map((run) => ({ arm: run.arm, value: run.metrics[key] }));
  if (best === undefined) return failure(`${found.name} has no runs that recorded ${info.label}.`);
  const then = rest.length === 0 ? "" : `, then ${rest.map((r) => `${r.arm} ${r.value}`).join(", ")}`;
  return success(
    `${found.name} by ${info.label} (${info.better} is better): ${best.arm} leads with ${best.value}${then}`,
    ranked.map(ref),
    found.caveat,
  );
}

/** Checks the numbers a Markdown draft states about recorded runs; a differing number becomes a caveat line. */
export function runsClaimsCheck(draft: string): Answer {
  if (draft.trim() === "") return failure("The draft is empty: paste the text whose numbers I should check.");
  const claims = parseClaims(draft, RUNS);
  if (claims.length === 0) {
    return failure(
      'I found no numbers about recorded runs in the draft. Write them like "kd-0.5 reached 7.9 WER"; runs.list shows the arms.',
    );
  }
  const differing = claims.filter((claim) => !claimMatches(claim));
  const matching = claims.length - differing.length;
  const runs = [...new Set(claims.map((claim) => claim.run))];
  const caveat = differing.map((claim) => {
    const label = METRICS[claim.metric]?.label ?? claim.metric;
    const recorded = claim.run.metrics[claim.metric];
    const actual =
      recorded === undefined ? `${claim.run.id} did not record it` : `${claim.run.id} recorded ${recorded}`;
    return `${claim.run.arm}: the draft says ${claim.written} ${label}, but ${actual}.`;
  });
  return success(
    `Checked ${count(claims.length, "claim", "claims")} against the recorded runs: ` +
      `${count(matching, "matches", "match")}, ${count(differing.length, "differs", "differ")}`,
    runs.map(ref),
    caveat.length === 0 ? null : caveat.join("\n"),
  );
}

/** What `runs.ask` receives. */
export interface RunsQuestion {
  readonly question: string;
}

/**
 * Routes a runs question by keyword rules. Drafts and claims go to the claims check;
 * winning, comparing or naming a sweep goes to the comparison; listing words go to the
 * list; anything else asks back.
 *
 * Claims: a question that carries claims ("check: kd-0.5 reached 7.9 WER") is checked
 * at once. A question that only mentions a draft ("are the numbers in my draft right?")
 * has nothing to check, so it asks back with `runs.claims_check` as the one option: the
 * person picks it and the frontend asks for its required `draft` argument.
 *
 * Comparison: "my sweep" without a name means the newest sweep on record, and the
 * metric is the one named in the question, else the sweep's main metric.
 */
export function routeRuns({ question }: RunsQuestion): Route {
  const said = new Set(words(question));
  const has = (...keys: string[]): boolean => keys.some((key) => said.has(key));
  const numbersJudged =
    has("numbers", "number", "figures") && has("right", "correct", "check", "true", "accurate");
  if (has("draft", "claim", "claims", "manuscript", "paper") || numbersJudged) {
    if (parseClaims(question, RUNS).length > 0)
      return { tool: "runs.claims_check", args: { draft: question } };
    return askBack("Which draft? Pick the claims check and paste the draft, and I will check its numbers.", [
      "runs.claims_check",
    ]);
  }
  const named = FAMILIES.find((family) => said.has(family.name));
  if (named !== undefined || has("won", "win", "wins", "winner", "best", "compare", "beat", "arm", "arms")) {
    const family = named ?? FAMILIES.toSorted((a, b) => b.date.localeCompare(a.date))[0];
    const metric =
      Object.keys(METRICS).find((key) => has(key)) ?? (has("latency") ? "latency_ms" : undefined);
    return {
      tool: "runs.compare",
      args: { family: family?.name, ...(metric === undefined ? {} : { metric }) },
    };
  }
  if (has("runs", "list", "recorded", "experiments", "sweeps")) return { tool: "runs.list", args: {} };
  return askBack(
    "I can compare the arms of a sweep, check the numbers in a draft, or list the recorded runs. Which one?",
    ["runs.compare", "runs.claims_check", "runs.list"],
  );
}

const specific: readonly DemoTool[] = [
  answerTool({
    name: "runs.list",
    title: "Recorded runs",
    description: "Which runs do I have? List my experiments and sweeps, or the arms of one sweep.",
    input: { family: z.string().optional().describe("Only this sweep's runs, e.g. kdsweep.") },
    run: ({ family }) => runsList(family),
  }),
  answerTool({
    name: "runs.compare",
    title: "Compare a sweep",
    description:
      "Which arm of my sweep won? Which setting is best? Ranks a sweep's arms by a metric, with the " +
      "caveats that limit the comparison.",
    input: {
      family: z
        .string()
        .describe(`The sweep (family of runs) to compare, e.g. kdsweep. Recorded: ${knownFamilies}.`),
      metric: z
        .string()
        .optional()
        .describe(
          `The metric to rank by (${Object.keys(METRICS).join(", ")}); defaults to the sweep's main metric.`,
        ),
    },
    run: ({ family, metric }) => runsCompare(family, metric),
  }),
  answerTool({
    name: "runs.claims_check",
    title: "Check a draft's numbers",
    description:
      "Are the numbers in my draft right? Checks claims like 'kd-0.5 reached 7.9 WER' in a Markdown " +
      "draft against the recorded runs.",
    input: {
      draft: z
        .string()
        .describe(
          "The draft text (Markdown) whose numbers to check, e.g. 'kd-0.5 reached 7.9 WER on eval-v1.'",
        ),
    },
    run: ({ draft }) => runsClaimsCheck(draft),
  }),
];

/** The runs namespace: its router, its tools list and its specific tools. */
export const runsTools: readonly DemoTool[] = [
  answerTool({
    name: "runs.ask",
    title: "Ask about runs",
    description:
      "Ask about your experiments in your own words: 'which arm of my sweep won?', 'are the numbers in " +
      "my draft right?', 'what runs do I have?'. Answers with caveats, or asks back when unsure.",
    input: { question: z.string().describe("The person's message, verbatim.") },
    run: (args) => runRoute(routeRuns(args), specific),
  }),
  toolsTool("runs", "Runs", specific),
  ...specific,
];
