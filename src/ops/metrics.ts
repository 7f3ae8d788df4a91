import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** The process's Prometheus registry, served at /metrics. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "roomgate_" });

/** Turns finished, by platform and whether the reply was delivered. */
export const turnsTotal = new Counter({
  name: "roomgate_turns_total",
  help: "Turns handled, by platform and result (delivered, redelivered, failed)",
  labelNames: ["platform", "result"] as const,
  registers: [registry],
});

/** Time from a worker taking an event to its reply being delivered. */
export const turnSeconds = new Histogram({
  name: "roomgate_turn_seconds",
  help: "Seconds from a worker taking an event to its reply being delivered",
  labelNames: ["platform"] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Namespace tool calls, by namespace and outcome. */
export const namespaceCalls = new Counter({
  name: "roomgate_namespace_calls_total",
  help: "Tool calls sent to namespaces, by namespace and outcome (ok, tool_error, failed)",
  labelNames: ["namespace", "outcome"] as const,
  registers: [registry],
});

/** Events enqueued by adapters, and those dropped as duplicates. */
export const eventsTotal = new Counter({
  name: "roomgate_events_total",
  help: "Inbound events offered to the inbox, by platform and result (queued, duplicate)",
  labelNames: ["platform", "result"] as const,
  registers: [registry],
});
