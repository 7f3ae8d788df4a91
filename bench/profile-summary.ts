// npx tsx bench/profile-summary.ts <turns> <file.cpuprofile>... — a per-turn attribution of
// `BENCH_CPU_PROF` profiles: each sample goes to the innermost frame of its stack that names
// a category (a package or a folder of src/), in the busiest stretch of the process's life
// (the timed run, not its start-up), summed over the files given (one arm's processes).
// BENCH_PROFILE_TOP=n also prints the n functions with the most self time.
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** First match wins; a frame matching none inherits its caller's category. */
const CATEGORIES: [string, RegExp][] = [
  [
    "Redis client (ioredis, bullmq's JS)",
    /node_modules\/(ioredis|bullmq|@ioredis|redis-errors|denque|cluster-key-slot|standard-as-callback)\//,
  ],
  // zod and msgpackr take their caller's category: a script reply's parse, an MCP result's, bullmq's packing.
  ["script args/replies (msgpack, zod)", /scheduler\/(scheduler-args|scheduler-replies|lua-script)\./],
  [
    "Telegram HTTP (grammY, fetch, http)",
    /node_modules\/(grammy|@grammyjs|node-fetch|abort-controller|whatwg-url|undici)\/|node:_http|node:http|telegram\//,
  ],
  ["MCP stdio/SDK", /node_modules\/@modelcontextprotocol\/|namespace\//],
  [
    "metrics/logging (prom-client, pino)",
    /node_modules\/(prom-client|pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact)\/|ops\/|core\/log/,
  ],
  ["scheduler (leases, turns, gate)", /scheduler\/|queue\//],
  ["sessions", /sessions\//],
  ["engine/render", /engine\/|render\/|core\//],
  ["bench peer's own code", /bench\//],
  ["other roomgate code", /\/(dist|src)\//],
  ["module loading (tsx, esbuild)", /node_modules\/(tsx|esbuild|get-tsconfig)\/|node:internal\/modules/],
];

const ROOT = `file://${process.cwd()}/`;

function categoryOf(frame: ProfileNode["callFrame"]): string | undefined {
  if (frame.functionName === "(garbage collector)") return "GC";
  if (frame.functionName === "(idle)") return "idle";
  if (frame.functionName === "(program)") return "(program)";
  // Relative to the checkout, so that a checkout's own folder name (a worktree called
  // "scheduler") cannot match a category.
  const url = frame.url.replace(ROOT, "");
  for (const [name, re] of CATEGORIES) if (re.test(url)) return name;
  return undefined;
}

/** A bucket counts as busy above this share of its time. */
const BUSY = 0.1;
/** Quiet buckets (of 250 ms) a stretch may span. */
const GAP = 8;

interface Loaded {
  file: string;
  byId: Map<number, ProfileNode>;
  cat: Map<number, string>;
  samples: number[];
  deltas: number[];
  /** Each sample's time, µs on the machine's monotonic clock (the same for every process). */
  at: number[];
}

function load(file: string): Loaded {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const cat = new Map<number, string>();
  const walk = (id: number, inherited: string) => {
    const n = byId.get(id)!;
    const c = categoryOf(n.callFrame) ?? inherited;
    cat.set(id, c);
    for (const child of n.children ?? []) walk(child, c);
  };
  walk(p.nodes[0]!.id, "node internals (no caller known)");
  let t = p.startTime;
  const at = p.timeDeltas.map((d) => (t += d));
  return { file, byId, cat, samples: p.samples, deltas: p.timeDeltas, at };
}

const BUCKET = 250_000;

/** The longest stretch of busy buckets (gaps up to GAP), as [from, to] µs. */
function busiest(l: Loaded): [number, number] {
  const buckets = new Map<number, number>();
  l.samples.forEach((id, i) => {
    if (l.cat.get(id) === "idle") return;
    const b = Math.floor(l.at[i]! / BUCKET);
    buckets.set(b, (buckets.get(b) ?? 0) + l.deltas[i]!);
  });
  // A loaded box leaves a busy process runnable but not running for whole buckets: a
  // stretch goes on across quiet buckets up to GAP long.
  let best: [number, number] = [0, -1];
  let start = -1;
  let lastBusy = -Infinity;
  for (const k of [...buckets.keys()].sort((a, b) => a - b)) {
    if (buckets.get(k)! / BUCKET <= BUSY) continue;
    if (k - lastBusy > GAP) start = k;
    lastBusy = k;
    if (k - start > best[1] - best[0]) best = [start, k];
  }
  return [best[0] * BUCKET, (best[1] + 1) * BUCKET];
}

/** ms per category within [from, to]; self time by function into `top`. */
function summarize(l: Loaded, [from, to]: [number, number]): Map<string, number> {
  const ms = new Map<string, number>();
  l.samples.forEach((id, i) => {
    if (l.at[i]! < from || l.at[i]! >= to) return;
    const c = l.cat.get(id)!;
    const d = l.deltas[i]! / 1000;
    ms.set(c, (ms.get(c) ?? 0) + d);
    const f = l.byId.get(id)!.callFrame;
    const name = `${c} | ${f.functionName || "(anon)"} ${f.url.replace(/.*node_modules\//, "").replace(/.*\/dist\//, "")}`;
    top.set(name, (top.get(name) ?? 0) + d);
  });
  return ms;
}

const [turnsArg, ...files] = process.argv.slice(2);
const turns = Number(turnsArg);
const total = new Map<string, number>();
/** Self time by function (BENCH_PROFILE_TOP=n prints the first n). */
const top = new Map<string, number>();
const loaded = files.map(load);
// The arm's timed run is the longest busy stretch of any of its processes (the one that
// runs the turns); every process of the arm is read over that same stretch.
const window = loaded
  .map(busiest)
  .reduce((a, b) => (b[1] - b[0] > a[1] - a[0] ? b : a), [0, 0] as [number, number]);
console.log(`the arm's busiest stretch: ${((window[1] - window[0]) / 1e6).toFixed(1)} s`);
for (const l of loaded) {
  const ms = summarize(l, window);
  const busy = [...ms].filter(([c]) => c !== "idle").reduce((s, [, v]) => s + v, 0);
  console.log(`${l.file}: busy ${(busy / turns).toFixed(3)} ms/turn`);
  for (const [c, v] of ms) total.set(c, (total.get(c) ?? 0) + v);
}
for (const [c, v] of [...total].sort((a, b) => b[1] - a[1]))
  console.log(`${c.padEnd(40)} ${(v / turns).toFixed(3)} ms/turn`);
const topN = Number(process.env.BENCH_PROFILE_TOP ?? 0);
for (const [f, v] of [...top].sort((a, b) => b[1] - a[1]).slice(0, topN))
  console.log(`  ${(v / turns).toFixed(4)} ${f}`);
