import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

// Every metric roomgate exports is defined here, so that any part can count on it
// and the dashboard in examples/grafana-dashboard.json is built from one list.

/** The process's Prometheus registry, served at /metrics. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: "roomgate_" });

const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Turns finished, by platform, namespace and outcome (delivered, redelivered, failed). */
export const turnsTotal = new Counter({
  name: "roomgate_turns_total",
  help: "Turns handled, by platform, namespace and outcome (delivered, redelivered, failed, dead_letter)",
  labelNames: ["platform", "namespace", "outcome"] as const,
  registers: [registry],
});

/** Time from a worker taking an event to its reply being delivered. */
export const turnSeconds = new Histogram({
  name: "roomgate_turn_seconds",
  help: "Seconds from a worker taking an event to its reply being delivered",
  labelNames: ["platform", "namespace"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Namespace tool calls, by namespace and outcome. */
export const namespaceCalls = new Counter({
  name: "roomgate_namespace_calls_total",
  help: "Tool calls sent to namespaces, by namespace and outcome (ok, tool_error, failed)",
  labelNames: ["namespace", "outcome"] as const,
  registers: [registry],
});

/** How long namespace tool calls take, by namespace and outcome. */
export const namespaceCallSeconds = new Histogram({
  name: "roomgate_namespace_call_seconds",
  help: "Seconds a namespace tool call took, by namespace and outcome (ok, tool_error, failed)",
  labelNames: ["namespace", "outcome"] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Events enqueued by adapters, and those dropped as duplicates. */
export const eventsTotal = new Counter({
  name: "roomgate_events_total",
  help: "Inbound events offered to the inbox, by platform and result (queued, duplicate, refused)",
  labelNames: ["platform", "result"] as const,
  registers: [registry],
});

/** Inbound platform events not taken at all, by why (not addressed to the bot in a group, an edit). */
export const ignoredTotal = new Counter({
  name: "roomgate_ignored_events_total",
  help: "Inbound messages not taken, by platform and reason (not_addressed, edit)",
  labelNames: ["platform", "reason"] as const,
  registers: [registry],
});

/** Edits of earlier messages, by platform and what was done (reasked, ignored). */
export const editsTotal = new Counter({
  name: "roomgate_edits_total",
  help: "Edited messages seen, by platform and action (reasked, ignored)",
  labelNames: ["platform", "action"] as const,
  registers: [registry],
});

/** Events waiting in room inboxes, the one being worked on included (read from Redis at scrape). */
export const queueDepth = new Gauge({
  name: "roomgate_queue_depth",
  help: "Inbound events waiting in room inboxes (the one in progress included), across all processes",
  registers: [registry],
});

/** Rooms with at least one waiting event (read from Redis at scrape). */
export const queueRooms = new Gauge({
  name: "roomgate_queue_rooms",
  help: "Rooms with at least one waiting inbound event",
  registers: [registry],
});

/** Age of the oldest waiting event (read from Redis at scrape); 0 when nothing waits. */
export const queueOldestSeconds = new Gauge({
  name: "roomgate_queue_oldest_age_seconds",
  help: "Seconds since the oldest waiting inbound event was received; 0 when the queue is empty",
  registers: [registry],
});

/** Send attempts to a platform (messages sent or edited), retries included, by outcome. */
export const sendsTotal = new Counter({
  name: "roomgate_sends_total",
  help: "Send attempts to a platform (messages sent or edited), by platform and outcome (ok, rate_limited, failed)",
  labelNames: ["platform", "outcome"] as const,
  registers: [registry],
});

/** Send attempts that were retries of an earlier attempt. */
export const sendRetriesTotal = new Counter({
  name: "roomgate_send_retries_total",
  help: "Send attempts that retried an earlier failed attempt, by platform",
  labelNames: ["platform"] as const,
  registers: [registry],
});

/** 429 answers from a platform, by platform and method: each one is also logged with its chat and wait. */
export const rateLimitedTotal = new Counter({
  name: "roomgate_rate_limited_total",
  help: "Sends a platform answered 429 (too many requests), by platform and method",
  labelNames: ["platform", "method"] as const,
  registers: [registry],
});

/**
 * Parts sent again because an earlier attempt's answer was never recorded: a possible duplicate
 * (that worker died or lost its lease mid-request). Attempts the platform refused (a 429, a
 * 4xx, no connection) are recorded as not sent and are not counted.
 */
export const resentUnknownPartsTotal = new Counter({
  name: "roomgate_resent_unknown_parts_total",
  help: "Answer parts sent again because an earlier attempt has no recorded answer (its worker died or lost the room with the request out), by platform",
  labelNames: ["platform"] as const,
  registers: [registry],
});

/** Parts sent again with a note telling the person they may see the part twice (platforms without idempotent sends). */
export const resentNotedPartsTotal = new Counter({
  name: "roomgate_resent_noted_parts_total",
  help: "Answer parts sent again after an attempt of unknown outcome, with a note to the person that they may see it twice, by platform",
  labelNames: ["platform"] as const,
  registers: [registry],
});

/** Rooms that gave their worker slot back to wait (a full send window or a 429), by platform and reason. */
export const deferralsTotal = new Counter({
  name: "roomgate_send_deferrals_total",
  help: "Turns parked to wait for a send slot (window) or a platform's retry_after (429)",
  labelNames: ["platform", "reason"] as const,
  registers: [registry],
});

/** Events from people not allowed by the binding, refused. */
export const refusalsTotal = new Counter({
  name: "roomgate_refused_total",
  help: "Events from senders not on the binding's allowlist, refused, by platform",
  labelNames: ["platform"] as const,
  registers: [registry],
});

/** Tool calls refused before reaching a namespace: outside its scope, denied, or not enabled. */
export const scopeRefusalsTotal = new Counter({
  name: "roomgate_scope_refusals_total",
  help: "Tool calls refused before reaching the namespace, by namespace and reason (not_in_namespace, not_enabled, denied_address)",
  labelNames: ["namespace", "reason"] as const,
  registers: [registry],
});

/** Turns moved to the dead letters because they could not be delivered by their deadline. */
export const deadLettersTotal = new Counter({
  name: "roomgate_dead_letters_total",
  help: "Turns moved to the dead-letter list (list and re-queue them with `roomgate dead-letters`)",
  labelNames: ["platform"] as const,
  registers: [registry],
});

/** Matrix: sends into an end-to-end encrypted room that this process could not encrypt, refused (nothing sent). */
export const matrixPlaintextRefusedTotal = new Counter({
  name: "roomgate_matrix_plaintext_refused_total",
  help: "Matrix sends refused because the room is end-to-end encrypted and this process cannot encrypt (nothing was sent), by reason",
  labelNames: ["reason"] as const,
  registers: [registry],
});

/** Matrix: encrypted events that could not be decrypted at once, by what became of them. */
export const matrixUndecryptedTotal = new Counter({
  name: "roomgate_matrix_undecrypted_events_total",
  help: "Matrix encrypted events not decryptable on arrival, by outcome (waiting, decrypted_late, dropped, untrusted: the trust mode refused the sender)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

/** Matrix: 1 while this process owns the bot's device (decrypts and encrypts), 0 while it stands by. */
export const matrixDeviceOwned = new Gauge({
  name: "roomgate_matrix_device_owned",
  help: "1 while this process owns the Matrix bot's end-to-end encryption device, 0 while it stands by",
  registers: [registry],
});

/** Schedule fires a worker took, by schedule (a config name, or "room" for /schedule add) and result. */
export const scheduleFiresTotal = new Counter({
  name: "roomgate_schedule_fires_total",
  help: "Schedule fires taken by a worker, by schedule (config name or room) and result (queued, duplicate, held, skipped_missed, skipped_cap, removed)",
  labelNames: ["schedule", "result"] as const,
  registers: [registry],
});

/** Webhook deliveries, by hook, HTTP status and reason (accepted, duplicate, or why refused). */
export const hookDeliveriesTotal = new Counter({
  name: "roomgate_hook_deliveries_total",
  help: "Webhook deliveries by hook, status and reason (accepted, duplicate, bad_signature, stale, unknown_hook, too_large, rate, replayed, unavailable)",
  labelNames: ["hook", "status", "reason"] as const,
  registers: [registry],
});

/** Resource update notifications and the posts they led to, by namespace and result. */
export const resourceUpdatesTotal = new Counter({
  name: "roomgate_resource_updates_total",
  help: "MCP resource updates by namespace and result (notified, posted, unchanged, duplicate, held)",
  labelNames: ["namespace", "result"] as const,
  registers: [registry],
});

/** Resource subscriptions this process holds, by namespace. */
export const resourceSubscriptions = new Gauge({
  name: "roomgate_resource_subscriptions",
  help: "MCP resource subscriptions held by this process, by namespace",
  labelNames: ["namespace"] as const,
  registers: [registry],
});

/** MCP tasks by namespace and what happened (started, resumed, completed, failed, cancelled). */
export const tasksTotal = new Counter({
  name: "roomgate_tasks_total",
  help: "MCP tasks by namespace and event (started, resumed, completed, failed, cancelled)",
  labelNames: ["namespace", "event"] as const,
  registers: [registry],
});

/** Namespaces held to a limit: a listing refused, a call ended (too long, a second open question). */
export const namespaceLimitsTotal = new Counter({
  name: "roomgate_namespace_limits_total",
  help: "Times a namespace broke a limit and was stopped, by namespace and limit (tools, tool_list_bytes, tool_list_pages, call_seconds, open_questions)",
  labelNames: ["namespace", "limit"] as const,
  registers: [registry],
});

/** Reconnects of roomgate's Redis clients (ioredis' own, after a lost connection), by client. */
export const redisReconnects = new Counter({
  name: "roomgate_redis_reconnects_total",
  help: "Reconnects of a Redis client after its connection was lost, by client (shared, wake-ups, lease renewals, proactive queue)",
  labelNames: ["client"] as const,
  registers: [registry],
});

/** Redis clients replaced by a new one, by client and reason (ended, silent). */
export const redisClientReplacements = new Counter({
  name: "roomgate_redis_client_replacements_total",
  help: "Redis clients replaced with a new one, by client and reason (ended: ioredis gave it up; silent: no command completed for redis.deadAfterSeconds)",
  labelNames: ["client", "reason"] as const,
  registers: [registry],
});

/**
 * When a receiver last took updates: the Telegram poller's last getUpdates answer (it
 * asks again only once the updates before are queued), the Matrix sync's last response
 * handled and stored. Alert on `time() - roomgate_receiver_last_poll_timestamp_seconds`.
 */
export const receiverLastPoll = new Gauge({
  name: "roomgate_receiver_last_poll_timestamp_seconds",
  help: "Unix time a receiver last took updates (Telegram getUpdates answered with everything before it queued; Matrix sync response handled and its token stored), by platform and receiver (bot id, or sync)",
  labelNames: ["platform", "receiver"] as const,
  registers: [registry],
});
