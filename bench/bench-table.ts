import type { Figures } from "./workloads.js";

const ms = (v: number) =>
  Number.isFinite(v) ? (v >= 1000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(2)} ms`) : "unanswered";
const ratio = (a: number, b: number) =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : "—";

/**
 * The benchmark's table: one block per workload, one row per arm, with ratios to
 * the `bot.start()` floor (and, for throughput, to `run(bot)` as well).
 */
export function formatTable(figures: Figures[], roundTrips: Map<string, number>): string {
  const head = [
    "workload",
    "arm",
    "answered",
    "p50",
    "p99",
    "msgs/s",
    "CPU ms/turn",
    "Redis cmds/turn",
    "RTT/turn",
    "RSS MiB",
    "<1s/chat",
    "max/s",
    "p50 ×",
    "p99 ×",
    "msgs/s ×",
    "× run(bot)",
    "CPU ×",
  ];
  const rows: string[][] = [head];
  for (const workload of [...new Set(figures.map((f) => f.workload))]) {
    const block = figures.filter((f) => f.workload === workload);
    const floor = block.find((f) => f.arm === "floor bot.start()");
    const runner = block.find((f) => f.arm === "floor run(bot)");
    for (const f of block) {
      const isFloor = f.arm.startsWith("floor");
      const trips = roundTrips.get(f.arm);
      rows.push([
        workload,
        f.arm,
        `${f.delivered}/${f.offered}`,
        ms(f.p50),
        ms(f.p99),
        f.msgsPerSecond.toFixed(0),
        f.cpuMsPerTurn.toFixed(2),
        isFloor ? "—" : f.redisCommandsPerTurn.toFixed(1),
        trips === undefined ? "—" : trips.toFixed(1),
        f.rssMiB.toFixed(0),
        String(f.chatGapsUnder1s),
        String(f.maxBotPerSecond),
        floor && f !== floor ? ratio(f.p50, floor.p50) : "",
        floor && f !== floor ? ratio(f.p99, floor.p99) : "",
        floor && f !== floor ? ratio(f.msgsPerSecond, floor.msgsPerSecond) : "",
        runner && !isFloor ? ratio(f.msgsPerSecond, runner.msgsPerSecond) : "",
        floor && f !== floor ? ratio(f.cpuMsPerTurn, floor.cpuMsPerTurn) : "",
      ]);
    }
  }
  // A Markdown table, so the output can go into docs/benchmarks.md as printed.
  return rows
    .map((r, i) => `| ${r.join(" | ")} |${i === 0 ? `\n|${r.map(() => "---").join("|")}|` : ""}`)
    .join("\n");
}
