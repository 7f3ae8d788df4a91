import type { PlatformSender } from "../core/adapter.js";
import type { Config } from "../core/config.js";
import type { InboundEvent } from "../core/event.js";
import type { TurnOutcome } from "../core/reply.js";
import { telegramRoom } from "../core/room.js";
import { silentLogger } from "../core/log.js";
import { NamespaceClient } from "../namespace/namespace-client.js";
import { startRuntime } from "../runtime.js";

/** Figures of one benchmark arm. */
export interface BenchFigures {
  name: string;
  turns: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p95ms: number;
  rssMiB: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function figures(name: string, latencies: number[], seconds: number): BenchFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    name,
    turns: latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50ms: percentile(sorted, 50),
    p95ms: percentile(sorted, 95),
    rssMiB: process.memoryUsage().rss / 2 ** 20,
  };
}

/** Baseline: the same questions straight to the namespace, `rooms` at a time, no queue or session. */
export async function benchDirect(
  config: Config,
  namespace: string,
  turns: number,
  rooms: number,
): Promise<BenchFigures> {
  const client = new NamespaceClient(namespace, config.namespaces[namespace]!, silentLogger());
  await client.start();
  const router = client.askTool ?? `${namespace}.ask`;
  const latencies: number[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: rooms }, async () => {
      while (next < turns) {
        next += 1;
        const t = performance.now();
        await client.call(router, { question: "what should I read today?" });
        latencies.push(performance.now() - t);
      }
    }),
  );
  const result = figures("direct namespace calls", latencies, (performance.now() - started) / 1000);
  await client.close();
  return result;
}

/** A sender that only records when each turn was delivered; it stands in for a platform. */
class NullSender implements PlatformSender {
  readonly platform = "telegram" as const;
  readonly done = new Map<string, number>();
  private waiting: (() => void) | undefined;
  constructor(private readonly expected: number) {}
  async deliver(event: InboundEvent, _outcome: TurnOutcome): Promise<string[]> {
    this.done.set(event.eventId, performance.now());
    if (this.done.size >= this.expected) this.waiting?.();
    return [event.eventId];
  }
  working(): () => void {
    return () => undefined;
  }
  all(): Promise<void> {
    return this.done.size >= this.expected ? Promise.resolve() : new Promise((r) => (this.waiting = r));
  }
}

/** The whole spine: inbox, kick queue, worker, session load/commit, engine, namespace, delivery. */
export async function benchPipeline(
  config: Config,
  redisUrl: string,
  namespace: string,
  turns: number,
  rooms: number,
): Promise<BenchFigures> {
  const sender = new NullSender(turns);
  const runtime = await startRuntime({
    config: { ...config, worker: { concurrency: rooms } },
    redisUrl,
    prefix: `bench${Date.now()}`,
    log: silentLogger(),
    platforms: [() => ({ sender })],
  });
  await runtime.namespaces.get(namespace).start();
  const sent = new Map<string, number>();
  const started = performance.now();
  for (let i = 0; i < turns; i += 1) {
    const event: InboundEvent = {
      kind: "message",
      text: "what should I read today?",
      eventId: `bench:${i}`,
      room: telegramRoom("bench", i % rooms),
      namespace,
      platform: "telegram",
      sender: { id: "bench", allowed: true },
      receivedAt: Date.now(),
      origin: {},
    };
    sent.set(event.eventId, performance.now());
    await runtime.deps.inbox.enqueue(event);
  }
  await sender.all();
  const seconds = (performance.now() - started) / 1000;
  const latencies = [...sent].map(([id, t]) => sender.done.get(id)! - t);
  const result = figures("roomgate pipeline", latencies, seconds);
  await runtime.stop();
  return result;
}

/** The side-by-side table, with the pipeline's figures as ratios of the baseline's. */
export function formatBench(baseline: BenchFigures, pipeline: BenchFigures): string {
  const row = (f: BenchFigures) =>
    `${f.name.padEnd(24)} ${String(f.turns).padStart(6)} ${f.perSecond.toFixed(1).padStart(9)} ${f.p50ms.toFixed(1).padStart(8)} ${f.p95ms.toFixed(1).padStart(8)} ${f.rssMiB.toFixed(0).padStart(8)}`;
  return [
    `${"arm".padEnd(24)} ${"turns".padStart(6)} ${"turns/s".padStart(9)} ${"p50 ms".padStart(8)} ${"p95 ms".padStart(8)} ${"RSS MiB".padStart(8)}`,
    row(baseline),
    row(pipeline),
    `ratio pipeline/baseline: throughput ${(pipeline.perSecond / baseline.perSecond).toFixed(2)}x, ` +
      `p50 ${(pipeline.p50ms / baseline.p50ms).toFixed(2)}x, p95 ${(pipeline.p95ms / baseline.p95ms).toFixed(2)}x`,
  ].join("\n");
}
