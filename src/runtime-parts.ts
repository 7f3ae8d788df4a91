import type { Receiver } from "./core/adapter.js";
import type { Config } from "./core/config.js";
import { failureReason, StartError, type PartFailure } from "./core/start-failure.js";
import type { Logger } from "./core/log.js";
import type { RoomSignals } from "./scheduler/room-signals.js";
import type { PartList, RuntimePart } from "./core/part.js";
import type { NamespaceRegistry } from "./namespace/namespace-registry.js";
import { startHealthServer, type HealthServer } from "./ops/health-server.js";
import { healthStatus } from "./ops/health-status.js";
import { watchQueue } from "./ops/queue-probe.js";
import { startProactive, type ProactiveService } from "./proactive/proactive-service.js";
import { LeaseRenewals } from "./scheduler/lease-renewal.js";
import { RoomWorker } from "./scheduler/room-worker.js";
import { SchedulerScripts } from "./scheduler/scheduler-scripts.js";
import { preloadScripts } from "./scheduler/lua-script.js";
import type { AuditLog } from "./sessions/audit-log.js";
import type { Keys } from "./sessions/keys.js";
import { checkLayout } from "./scheduler/layout-check.js";
import type { PairedUsers } from "./sessions/paired-users.js";
import type { RedisConnection } from "./sessions/redis-connection.js";

/** A client silent for this long is named by /healthz (it is replaced only after `redis.deadAfterSeconds`). */
const SILENT_CLIENT_MS = 3000;

/** How often a worker process records approvals that expired undecided. */
const APPROVAL_SWEEP_MS = 15_000;

/**
 * Redis itself: connected, the key layout checked and every declared script loaded
 * before anything reports on it (/healthz is asked right after a start); stuck while
 * a client of the process has answered nothing for a few seconds.
 */
export function redisPart(connection: RedisConnection, keys: Keys, own: boolean): RuntimePart {
  return {
    name: "redis",
    async start() {
      const redis = connection.client;
      await redis.ping();
      await checkLayout(redis, keys);
      await preloadScripts(redis);
    },
    async stop() {
      if (own) connection.close();
    },
    stuck() {
      // A client in a blocking BLMPOP answers its PING only when that returns: silent that long is idle, not stuck.
      const silent = connection.clientStates().filter((c) => c.silentMs - c.blocksForMs >= SILENT_CLIENT_MS);
      if (silent.length === 0) return undefined;
      return silent
        .map(
          (c) =>
            `client "${c.name}" answered nothing for ${Math.round(c.silentMs / 1000)} s${c.lastError ? ` (${c.lastError})` : ""}`,
        )
        .join("; ");
    },
  };
}

/** The users `/pair` added, loaded and kept current. */
export function pairedPart(paired: PairedUsers): RuntimePart {
  return {
    name: "paired users",
    start: () => paired.start(),
    async stop() {
      paired.stop();
    },
  };
}

/** Queue depth gauges read from Redis when /metrics is scraped. */
export function queueProbePart(connection: RedisConnection, keys: Keys): RuntimePart {
  return {
    name: "queue metrics",
    async start() {
      watchQueue(connection.client, keys);
    },
    async stop() {},
  };
}

/** Schedules, mutes and webhooks (src/proactive); `service` once started. */
export function proactivePart(
  options: Parameters<typeof startProactive>[0],
): RuntimePart & { service?: ProactiveService } {
  const part: RuntimePart & { service?: ProactiveService } = {
    name: "proactive queue",
    async start() {
      part.service = await startProactive(options);
    },
    async stop() {
      await part.service?.close();
    },
  };
  return part;
}

/** /healthz, /metrics and the webhooks' routes, when `config.http` asks for them; `server` once started. */
export function healthPart(options: {
  config: Config;
  connection: RedisConnection;
  log: Logger;
  parts: PartList;
  /** Whether this process runs workers: /healthz then reports them as `worker`. */
  serving: boolean;
  proactive: () => ProactiveService | undefined;
}): RuntimePart & { server?: HealthServer } {
  const part: RuntimePart & { server?: HealthServer } = {
    name: "health server",
    async start() {
      const http = options.config.http;
      if (!http) return;
      part.server = await startHealthServer({
        ...http,
        redis: options.connection.client,
        log: options.log,
        checks: options.serving
          ? { worker: () => !options.parts.stuck().some((s) => s.part === "workers") }
          : {},
        stuck: () => options.parts.stuck(),
        routes: options.proactive()?.routes ?? [],
      });
    },
    async stop() {
      await part.server?.close();
    },
  };
  return part;
}

/** Every namespace, connected at start when asked (so the start log shows which work); closed last. */
export function namespacesPart(namespaces: NamespaceRegistry, connect: boolean, log: Logger): RuntimePart {
  return {
    name: "namespaces",
    async start() {
      if (!connect) return;
      await Promise.all(
        namespaces.names().map((name) =>
          namespaces
            .get(name)
            .start()
            .catch((err: unknown) =>
              log.error({ err, namespace: name }, "namespace not reachable at start; retried on use"),
            ),
        ),
      );
    },
    stop: () => namespaces.close(),
  };
}

/** The subscriber connection that tells a waiting call its room's inbox changed; closed after the workers. */
export function signalsPart(signals: RoomSignals): RuntimePart {
  return {
    name: "room signals",
    async start() {},
    async stop() {
      signals.close();
    },
  };
}

/** The lease renewals of the rooms `worker` holds, on a client of their own; started before it, stopped after. */
export function renewalsPart(
  connection: RedisConnection,
  keys: Keys,
  leaseMs: number,
  log: Logger,
  worker: () => RoomWorker | undefined,
): RuntimePart {
  const client = connection.create({ name: "lease renewals" });
  client.on("error", () => undefined);
  return new LeaseRenewals({
    scripts: new SchedulerScripts(client, keys),
    leaseMs,
    log,
    held: () => worker()?.leases() ?? [],
  });
}

/** The room workers; `worker` once started. */
export function workersPart(
  options: ConstructorParameters<typeof RoomWorker>[0],
): RuntimePart & { worker?: RoomWorker } {
  const part: RuntimePart & { worker?: RoomWorker } = {
    name: "workers",
    async start() {
      const worker = new RoomWorker(options);
      part.worker = worker;
      await worker.start();
    },
    stop: async (graceMs) => part.worker?.stop(graceMs),
    stuck: () => part.worker?.stuck(),
  };
  return part;
}

/** Approvals nobody decided in time recorded as expired, by whichever process sweeps first. */
export function approvalSweepPart(audit: AuditLog, log: Logger): RuntimePart {
  let timer: NodeJS.Timeout | undefined;
  return {
    name: "approval sweep",
    async start() {
      timer = setInterval(() => {
        audit.sweep().catch((err: unknown) => log.warn({ err }, "sweeping expired approvals failed"));
      }, APPROVAL_SWEEP_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
    },
  };
}

/**
 * One part per receiver. A receiver that fails to start is logged and reported in
 * /healthz as degraded while the others run; only when every receiver failed does the
 * start fail.
 */
export function receiverParts(all: Receiver[], log: Logger): RuntimePart[] {
  // Every receiver that failed, so that a start where all fail names each of them.
  const failures: PartFailure[] = [];
  return all.map((receiver, i) => {
    const name = receiver.name ?? `receiver ${i + 1} (${receiver.constructor.name})`;
    let running = false;
    return {
      name,
      async start() {
        try {
          await receiver.start();
          running = true;
        } catch (err) {
          const reason = failureReason(err);
          failures.push({ part: name, reason });
          // The reason, not a stack: what failed is the configuration or the network.
          log.error({ receiver: name, reason }, "a receiver could not start; the others run");
          log.debug({ err, receiver: name }, "the receiver's error");
          healthStatus.degrade(name, reason);
          if (failures.length === all.length) throw new StartError(failures, { cause: err });
        }
      },
      async stop() {
        if (running) await receiver.stop();
      },
      stuck: () => (running ? receiver.stuck?.() : undefined),
    };
  });
}
