// npx tsx bench/profile-summary.ts <turns> <file.cpuprofile>... — a per-turn attribution of
// `BENCH_CPU_PROF` profiles: each sample goes to the innermost frame of its stack that names
// a category (a package or a folder of src/), in the busiest stretch of the process's life
// (the timed run, not its start-up), summed over the files given (one arm's processes).
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
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
  [
    "script args/replies (msgpack, zod)",
    /node_modules\/(msgpackr|@msgpack|zod)\/|scheduler\/(scheduler-args|scheduler-replies|lua-script)\./,
  ],
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

function categoryOf(frame: ProfileNode["callFrame"]): string | undefined {
  if (frame.functionName === "(garbage collector)") return "GC";
  if (frame.functionName === "(idle)") return "idle";
  if (frame.functionName === "(program)") return "(program)";
  for (const [name, re] of CATEGORIES) if (re.test(frame.url)) return name;
  return undefined;
}

/** ms per category in the busiest stretch: buckets of 250 ms, the longest run above 25 % busy. */
function summarize(file: string): { ms: Map<string, number>; windowMs: number } {
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
  const BUCKET = 250_000;
  let t = 0;
  const at: number[] = [];
  for (const d of p.timeDeltas) at.push((t += d));
  const buckets = new Map<number, { busy: number; all: number }>();
  p.samples.forEach((id, i) => {
    const b = Math.floor(at[i]! / BUCKET);
    const e = buckets.get(b) ?? { busy: 0, all: 0 };
    const d = p.timeDeltas[i]!;
    e.all += d;
    if (cat.get(id) !== "idle") e.busy += d;
    buckets.set(b, e);
  });
  const keys = [...buckets.keys()].sort((a, b) => a - b);
  let best: [number, number] = [0, -1];
  let start = -1;
  for (const k of keys) {
    const e = buckets.get(k)!;
    if (e.busy / BUCKET > 0.25) {
      if (start < 0) start = k;
      if (k - start > best[1] - best[0]) best = [start, k];
    } else start = -1;
  }
  const ms = new Map<string, number>();
  p.samples.forEach((id, i) => {
    const b = Math.floor(at[i]! / BUCKET);
    if (b < best[0] || b > best[1]) return;
    const c = cat.get(id)!;
    ms.set(c, (ms.get(c) ?? 0) + p.timeDeltas[i]! / 1000);
    const f = byId.get(id)!.callFrame;
    const name = `${c} | ${f.functionName || "(anon)"} ${f.url.replace(/.*node_modules\//, "").replace(/.*\/dist\//, "")}`;
    top.set(name, (top.get(name) ?? 0) + p.timeDeltas[i]! / 1000);
  });
  return { ms, windowMs: ((best[1] - best[0] + 1) * BUCKET) / 1000 };
}

const [turnsArg, ...files] = process.argv.slice(2);
const turns = Number(turnsArg);
const total = new Map<string, number>();
/** Self time by function (BENCH_PROFILE_TOP=n prints the first n). */
const top = new Map<string, number>();
for (const f of files) {
  const { ms, windowMs } = summarize(f);
  const busy = [...ms].filter(([c]) => c !== "idle").reduce((s, [, v]) => s + v, 0);
  console.log(`${f}: busiest ${(windowMs / 1000).toFixed(1)} s, busy ${(busy / turns).toFixed(3)} ms/turn`);
  for (const [c, v] of ms) total.set(c, (total.get(c) ?? 0) + v);
}
for (const [c, v] of [...total].sort((a, b) => b[1] - a[1]))
  console.log(`${c.padEnd(40)} ${(v / turns).toFixed(3)} ms/turn`);
const topN = Number(process.env.BENCH_PROFILE_TOP ?? 0);
for (const [f, v] of [...top].sort((a, b) => b[1] - a[1]).slice(0, topN))
  console.log(`  ${(v / turns).toFixed(4)} ${f}`);
