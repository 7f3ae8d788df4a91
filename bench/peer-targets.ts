import { BULLMQ_ARM } from "./arms.js";
import type { Figures } from "./workloads.js";

/** The roomgate arm with as many processes as the bullmq peer: `start` and one `worker`, limits raised. */
export const PAIR_ARM = "roomgate, limits raised, start + 1 worker";

/**
 * The same two processes in the peer's own shape: `start --receive-only` only receives
 * and queues (as the peer's bot only adds jobs), the worker runs every turn.
 */
export const SPLIT_ARM = "roomgate, limits raised, start --receive-only + 1 worker";

/** roomgate's one-process arm, shown beside the pair for reference. */
const SINGLE_ARM = "roomgate, limits raised";

const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "—");

/** CPU ms per turn as "processes + Redis" (the namespace child and loader counted with the processes). */
function cpu(f: Figures): string {
  const { process, children, redis } = f.cpuSplit;
  return `${(process + children).toFixed(2)} + ${redis.toFixed(2)} ms`;
}

/** One target with this run's figure; `met` undefined for a reference line. */
export interface TargetLine {
  what: string;
  figure: string;
  met: boolean | undefined;
}

/**
 * Issue 28's targets against the grammY + bullmq peer in the same run: a burst at
 * >= 1.0x its msgs/s with as many processes, CPU per turn (processes + Redis) <=
 * 1.5x, Redis commands per turn <= 1.2x; 200/s at p50 <= 1.2x and p99 <= 1.5x, judged
 * for both two-process shapes (start working beside the worker, and receiving only).
 * The one-process arm's ratios follow as "ref" lines. Empty when the peer did not run.
 */
export function formatPeerTargets(figures: Figures[]): string {
  return formatLines(peerTargets(figures), "ref");
}

/** Lines as the bench prints them: met, NOT MET, or `unjudged` for a line with no verdict. */
export function formatLines(lines: TargetLine[], unjudged: string): string {
  return lines
    .map((l) => `- ${l.met === undefined ? unjudged : l.met ? "met" : "NOT MET"}: ${l.what}: ${l.figure}`)
    .join("\n");
}

/** Issue 28's targets against the peer, one line each (see formatPeerTargets). */
export function peerTargets(figures: Figures[]): TargetLine[] {
  const lines: TargetLine[] = [];
  const of = (workload: string, arm: string) => figures.find((f) => f.workload === workload && f.arm === arm);
  for (const workload of [...new Set(figures.map((f) => f.workload))]) {
    const peer = of(workload, BULLMQ_ARM);
    if (!peer) continue;
    for (const [arm, reference] of [
      [PAIR_ARM, false],
      [SPLIT_ARM, false],
      [SINGLE_ARM, true],
    ] as const) {
      const rg = of(workload, arm);
      if (!rg) continue;
      const met = (ok: boolean) => (reference ? undefined : ok);
      const who = reference ? `${workload}, ${arm} (reference)` : `${workload}, ${arm}`;
      if (workload.includes("at once")) {
        const rate = rg.msgsPerSecond / peer.msgsPerSecond;
        lines.push({
          what: `${who}: >= 1.0x the peer's msgs/s`,
          figure: `${rg.msgsPerSecond.toFixed(0)} / ${peer.msgsPerSecond.toFixed(0)} = ${x(rate)}; processes at ${(rg.processCores * 100).toFixed(0)}% / ${(peer.processCores * 100).toFixed(0)}% of a core`,
          met: met(rate >= 1),
        });
        const c = rg.cpuMsPerTurn / peer.cpuMsPerTurn;
        lines.push({
          what: `${who}: CPU ms/turn (processes + Redis) <= 1.5x the peer's`,
          figure: `${cpu(rg)} / ${cpu(peer)} = ${x(c)}`,
          met: met(c <= 1.5),
        });
        const cmds = rg.redisCommandsPerTurn / peer.redisCommandsPerTurn;
        lines.push({
          what: `${who}: Redis commands/turn <= 1.2x the peer's`,
          figure: `${rg.redisCommandsPerTurn.toFixed(1)} / ${peer.redisCommandsPerTurn.toFixed(1)} = ${x(cmds)}`,
          met: met(cmds <= 1.2),
        });
      }
      if (workload === "200/s") {
        const [a, b] = [rg.split, peer.split];
        lines.push({
          what: `${who}: p50 <= 1.2x the peer's`,
          figure: `${rg.p50.toFixed(2)} / ${peer.p50.toFixed(2)} ms = ${x(rg.p50 / peer.p50)} (to the bot ${a.toBotP50.toFixed(2)} / ${b.toBotP50.toFixed(2)} ms, then in it ${a.inBotP50.toFixed(2)} / ${b.inBotP50.toFixed(2)} ms)`,
          met: met(rg.p50 / peer.p50 <= 1.2),
        });
        lines.push({
          what: `${who}: p99 <= 1.5x the peer's`,
          figure: `${rg.p99.toFixed(2)} / ${peer.p99.toFixed(2)} ms = ${x(rg.p99 / peer.p99)} (in the bot ${a.inBotP99.toFixed(2)} / ${b.inBotP99.toFixed(2)} ms)`,
          met: met(rg.p99 / peer.p99 <= 1.5),
        });
      }
    }
  }
  return lines;
}

/**
 * Each judged target over every round: how many rounds met it and each round's
 * figure, so one run's evidence reads in one place.
 */
export function formatAcrossRounds(rounds: TargetLine[][]): string {
  const byWhat = new Map<string, TargetLine[]>();
  for (const round of rounds)
    for (const line of round) {
      if (line.met === undefined) continue;
      byWhat.set(line.what, [...(byWhat.get(line.what) ?? []), line]);
    }
  return [...byWhat]
    .map(([what, lines]) => {
      const met = lines.filter((l) => l.met).length;
      return `- met in ${met} of ${lines.length} rounds: ${what}: ${lines.map((l) => l.figure).join(" | ")}`;
    })
    .join("\n");
}
