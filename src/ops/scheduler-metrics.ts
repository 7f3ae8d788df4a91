import { Counter } from "prom-client";
import { registry } from "./metrics.js";

/** 429 answers from a platform, by platform and method: each one is also logged with its chat and wait. */
export const rateLimitedTotal = new Counter({
  name: "roomgate_rate_limited_total",
  help: "Sends a platform answered 429 (too many requests), by platform and method",
  labelNames: ["platform", "method"] as const,
  registers: [registry],
});

/** Rooms that gave their worker slot back to wait (a full send window or a 429), by platform and reason. */
export const deferralsTotal = new Counter({
  name: "roomgate_send_deferrals_total",
  help: "Turns parked to wait for a send slot (window) or a platform's retry_after (429)",
  labelNames: ["platform", "reason"] as const,
  registers: [registry],
});

/** Turns moved to the dead letters because they could not be delivered by their deadline. */
export const deadLettersTotal = new Counter({
  name: "roomgate_dead_letters_total",
  help: "Turns moved to the dead-letter list (list and re-queue them with `roomgate dead-letters`)",
  labelNames: ["platform"] as const,
  registers: [registry],
});
