/**
 * The demo server's dataset: a small, fixed world (no clock, no network) so every
 * answer is deterministic and can be asserted character for character.
 */

/** The day the fixture feed calls "today". */
export const FEED_TODAY = "2026-08-22";

/** One item of the reading feed. */
export interface FeedItem {
  readonly id: string;
  readonly title: string;
  readonly url: string;
  readonly source: string;
  readonly date: string;
  readonly tags: readonly string[];
  /** How well the item fits the reader's recent reading, 0..1. */
  readonly score: number;
  /** True for the current feed; false for items only in the archive. */
  readonly current: boolean;
}

/** A title full of characters that Telegram HTML, Matrix HTML and Markdown would interpret. */
export const MARKUP_TITLE = "<b>Bold</b> & *stars* _under_ `tick` &amp;";

/** The query that finds exactly the markup item. */
export const MARKUP_QUERY = "markup";

/** The exact answer line of `feed.search({query: MARKUP_QUERY})`, for escaping tests on every platform. */
export const MARKUP_ANSWER = `Found 1 item for "${MARKUP_QUERY}": ${MARKUP_TITLE}`;

/** Ids of feed items whose url is not http(s), so renderers must show them unlinked. */
export const UNLINKABLE_ITEM_IDS = ["wer-toolkit-mirror", "suspicious-note"] as const;

/** The whole feed archive; `current` marks what is in today's feed. */
export const FEED_ITEMS: readonly FeedItem[] = [
  {
    id: "arxiv-2408.01234",
    title: "Distilling speech recognisers without the teacher's tokenizer",
    url: "https://arxiv.org/abs/2408.01234",
    source: "arXiv",
    date: "2026-08-22",
    tags: ["distillation", "speech", "asr"],
    score: 0.92,
    current: true,
  },
  {
    id: "kd-temperature-blog",
    title: "Why distillation temperature matters less than you think",
    url: "https://blog.example.org/kd-temperature",
    source: "Example ML blog",
    date: "2026-08-21",
    tags: ["distillation", "temperature"],
    score: 0.81,
    current: true,
  },
  {
    id: "arxiv-2408.05678",
    title: "A survey of evaluation-set leakage in speech benchmarks",
    url: "https://arxiv.org/abs/2408.05678",
    source: "arXiv",
    date: "2026-08-21",
    tags: ["evaluation", "leakage", "asr"],
    score: 0.77,
    current: true,
  },
  {
    id: "markup-test",
    title: MARKUP_TITLE,
    // The `&` in the query string tests attribute escaping of link targets.
    url: "https://example.org/markup?a=1&b=2",
    source: "roomgate fixtures",
    date: "2026-08-20",
    tags: ["markup", "escaping"],
    score: 0.41,
    current: true,
  },
  {
    id: "wer-toolkit-mirror",
    title: "Mirror of the WER scoring toolkit",
    url: "ftp://mirror.example.org/wer-toolkit.tar.gz",
    source: "mirror.example.org",
    date: "2026-08-19",
    tags: ["wer", "tools"],
    score: 0.33,
    current: true,
  },
  {
    id: "seeds-blog",
    title: "Seeds, variance and the lies our sweeps tell",
    url: "https://blog.example.org/seeds",
    source: "Example ML blog",
    date: "2026-07-30",
    tags: ["seeds", "variance", "sweeps"],
    score: 0.7,
    current: false,
  },
  {
    id: "arxiv-2301.00042",
    title: "Knowledge distillation for conformer acoustic models",
    url: "https://arxiv.org/abs/2301.00042",
    source: "arXiv",
    date: "2026-06-02",
    tags: ["distillation", "conformer", "asr"],
    score: 0.66,
    current: false,
  },
  {
    id: "suspicious-note",
    title: "A note that links to a script",
    url: "javascript:alert(1)",
    source: "unknown",
    date: "2026-05-11",
    tags: ["security"],
    score: 0.1,
    current: false,
  },
];

/** How a metric is read: which direction is better, and how to name it in an answer line. */
export interface Metric {
  readonly label: string;
  readonly better: "lower" | "higher";
}

/** The metrics recorded by the fixture runs. */
export const METRICS: Readonly<Record<string, Metric>> = {
  wer: { label: "WER", better: "lower" },
  cer: { label: "CER", better: "lower" },
  latency_ms: { label: "latency (ms)", better: "lower" },
};

/** One recorded training run: one arm of a sweep. */
export interface Run {
  readonly id: string;
  readonly family: string;
  readonly arm: string;
  readonly seed: number;
  readonly evalSet: string;
  readonly metrics: Readonly<Record<string, number>>;
}

/** A sweep: a family of runs that differ in one setting, with what is known to make it hard to compare. */
export interface Family {
  readonly name: string;
  readonly date: string;
  readonly metric: string;
  readonly caveat: string | null;
}

/** The known caveat of the kdsweep comparison, passed through unabridged by `runs.compare`. */
export const KDSWEEP_CAVEAT =
  "kd-0.0 and kd-0.25 ran with seed 3 while kd-0.5 and kd-0.75 ran with seed 17, so part of the gap " +
  "may be seed variance rather than the distillation weight. kd-0.75 was scored on eval-v2 and the " +
  "other arms on eval-v1, so its WER is not directly comparable and it should not be called the winner " +
  "until it is re-scored on eval-v1. Each arm ran once: there are no error bars.";

/**
 * A deterministic caveat of about 10,000 characters on many lines, with an emoji
 * cluster, a flag and a combining accent sprinkled in, for message-splitting tests.
 */
export const LONG_CAVEAT = Array.from({ length: 60 }, (_, index) => {
  const n = index + 1;
  const arm = `long-0${(n % 5) + 1}`;
  const other = `long-0${((n + 2) % 5) + 1}`;
  const marks = ["", " ⚠️", " 👩🏽‍🔬", " 🇪🇺", " cafe\u0301"][n % 5];
  return (
    `Note ${n}: ${arm} and ${other} shared checkpoint ${1000 + n * 37} but used different data ` +
    `orders,${marks} so their WER gap of 0.${n % 10} points is within seed noise and should not be reported.`
  );
}).join("\n");

/** The sweeps on record; the newest is what "my sweep" means. */
export const FAMILIES: readonly Family[] = [
  { name: "kdsweep", date: "2026-08-20", metric: "wer", caveat: KDSWEEP_CAVEAT },
  { name: "lrsweep", date: "2026-08-01", metric: "wer", caveat: null },
  { name: "longsweep", date: "2026-07-15", metric: "wer", caveat: LONG_CAVEAT },
];

function run(family: string, arm: string, seed: number, evalSet: string, wer: number, cer: number): Run {
  return { id: `${family}/${arm}`, family, arm, seed, evalSet, metrics: { wer, cer, latency_ms: 180 } };
}

/** Every recorded run. */
export const RUNS: readonly Run[] = [
  run("kdsweep", "kd-0.0", 3, "eval-v1", 9.4, 4.1),
  run("kdsweep", "kd-0.25", 3, "eval-v1", 8.6, 3.8),
  run("kdsweep", "kd-0.5", 17, "eval-v1", 7.9, 3.5),
  run("kdsweep", "kd-0.75", 17, "eval-v2", 7.6, 3.4),
  run("lrsweep", "lr-1e-4", 5, "eval-v1", 8.8, 3.9),
  run("lrsweep", "lr-3e-4", 5, "eval-v1", 8.2, 3.6),
  run("lrsweep", "lr-1e-3", 5, "eval-v1", 8.5, 3.7),
  run("longsweep", "long-01", 1, "eval-v1", 9.1, 4.0),
  run("longsweep", "long-02", 2, "eval-v1", 9.0, 4.0),
  run("longsweep", "long-03", 3, "eval-v1", 8.9, 3.9),
  run("longsweep", "long-04", 4, "eval-v1", 9.2, 4.1),
  run("longsweep", "long-05", 5, "eval-v1", 9.3, 4.2),
];

/** The page of a run on the (fictional) run tracker. */
export function runUrl(run: Run): string {
  return `https://runs.example.org/${run.family}/${run.arm}`;
}

/** One concept of the knowledge graph, with the words people use for it. */
export interface Concept {
  readonly id: string;
  readonly label: string;
  readonly aliases: readonly string[];
}

/** The knowledge graph's concepts; lattice-cryptography is deliberately unconnected. */
export const CONCEPTS: readonly Concept[] = [
  { id: "knowledge-distillation", label: "knowledge distillation", aliases: ["kd", "distillation"] },
  { id: "teacher-model", label: "teacher model", aliases: ["teacher"] },
  { id: "student-model", label: "student model", aliases: ["student"] },
  { id: "temperature", label: "distillation temperature", aliases: ["temperature"] },
  { id: "word-error-rate", label: "word error rate", aliases: ["wer"] },
  { id: "speech-recognition", label: "speech recognition", aliases: ["asr"] },
  { id: "conformer", label: "conformer", aliases: ["conformers"] },
  { id: "seed-variance", label: "seed variance", aliases: ["seeds", "seed"] },
  { id: "eval-set-leakage", label: "eval-set leakage", aliases: ["leakage"] },
  { id: "lattice-cryptography", label: "lattice cryptography", aliases: ["lattices"] },
];

/** An undirected, labelled link between two concepts. */
export interface Edge {
  readonly from: string;
  readonly to: string;
  readonly relation: string;
}

/** The knowledge graph's links, in a fixed order so path search is deterministic. */
export const EDGES: readonly Edge[] = [
  { from: "knowledge-distillation", to: "teacher-model", relation: "learns from" },
  { from: "knowledge-distillation", to: "student-model", relation: "trains" },
  { from: "knowledge-distillation", to: "temperature", relation: "is tuned by" },
  { from: "student-model", to: "word-error-rate", relation: "is measured by" },
  { from: "speech-recognition", to: "word-error-rate", relation: "is measured by" },
  { from: "conformer", to: "speech-recognition", relation: "is an architecture for" },
  { from: "conformer", to: "student-model", relation: "is used as" },
  { from: "word-error-rate", to: "seed-variance", relation: "is confounded by" },
  { from: "word-error-rate", to: "eval-set-leakage", relation: "is inflated by" },
];

/** Named example expressions for the symbolic tools; answers about them link to their page. */
export const SYM_EXAMPLES: readonly { readonly id: string; readonly expr: string }[] = [
  { id: "binomial-square", expr: "(x+1)^2 = x^2 + 2*x + 1" },
  { id: "difference-of-squares", expr: "(a+b)*(a-b) = a^2 - b^2" },
  { id: "freshman-dream", expr: "(a+b)^2 = a^2 + b^2" },
  { id: "partial-fractions", expr: "x/(x+1) + 1/(x+1) = 1" },
  { id: "square-minus-one", expr: "(x+1)^2 - 1" },
];
