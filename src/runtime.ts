import type { Inbox, PlatformSender, Receiver, VoiceTool } from "./core/adapter.js";
import type { Config } from "./core/config.js";
import { allBindings } from "./access/bindings.js";
import { RoomgateError } from "./core/errors.js";
import type { InboundEvent } from "./core/event.js";
import { setLibraryLogger } from "./core/library-log.js";
import { secretsOf } from "./core/config-secrets.js";
import { createLogger, registerSecret, type Logger } from "./core/log.js";
import { PartList, type RuntimePart } from "./core/part.js";
import { RoomSignals } from "./scheduler/room-signals.js";
import { PairingGate } from "./access/pairing-gate.js";
import { NamespaceRegistry } from "./namespace/namespace-registry.js";
import type { HealthServer } from "./ops/health-server.js";
import type { ProactiveService } from "./proactive/proactive-service.js";
import { laneOf as defaultLaneOf } from "./scheduler/lanes.js";
import type { LaneSpec } from "./scheduler/lane-state.js";
import { RedisInbox } from "./scheduler/redis-inbox.js";
import { SchedulerScripts } from "./scheduler/scheduler-scripts.js";
import {
  approvalSweepPart,
  healthPart,
  namespacesPart,
  pairedPart,
  proactivePart,
  queueProbePart,
  receiverParts,
  redisPart,
  renewalsPart,
  signalsPart,
  workersPart,
} from "./runtime-parts.js";
import { turnRunner } from "./runtime-turns.js";
import { AuditLog } from "./sessions/audit-log.js";
import type { RedisLostError } from "./sessions/client-watch.js";
import { Keys } from "./sessions/keys.js";
import { PairedUsers } from "./sessions/paired-users.js";
import { PairingCodes } from "./sessions/pairing-codes.js";
import { RedisRateLimiter } from "./scheduler/rate-limiter.js";
import { RedisConnection, type RedisClient } from "./sessions/redis-connection.js";
import { RedisTaskLedger } from "./sessions/task-ledger.js";

/** What a platform module is built from. */
export interface RuntimeDeps {
  config: Config;
  /** The process's shared client (a Cluster or a Sentinel-aware client where configured). */
  redis: RedisClient;
  /** Where more clients come from (a blocking one, a bullmq connection): the same topology. */
  connection: RedisConnection;
  keys: Keys;
  /** The scheduler's scripts, for anything that enqueues or checks flood limits itself. */
  scheduler: SchedulerScripts;
  inbox: Inbox;
  limiter: RedisRateLimiter;
  log: Logger;
  /** Users `/pair` added to bindings, mirrored in memory for the edge. */
  paired: PairedUsers;
  /** `/pair <code>` at the edge. */
  pairing: PairingGate;
  /** The audit trail (approvals, pairings, destructive calls). */
  audit: AuditLog;
}

/**
 * The parts of the runtime that decide who may do what beyond the configuration: the
 * users pairing added (loaded by `paired.start()`), the `/pair` gate and the audit trail.
 */
export function permissionDeps(
  config: Config,
  redis: RedisClient,
  keys: Keys,
): Pick<RuntimeDeps, "paired" | "pairing" | "audit"> {
  const audit = new AuditLog(
    redis,
    keys,
    config.audit.keepDays * 24 * 3600_000,
    config.audit.maxArgumentBytes,
  );
  const paired = new PairedUsers(
    redis,
    keys,
    allBindings(config).map((b) => b.name),
  );
  const pairing = new PairingGate({ codes: new PairingCodes(redis, keys), paired, audit, redis, keys });
  return { paired, pairing, audit };
}

/**
 * One platform's halves; `lanes` are the queue lanes its sender serves (default: its
 * platform), some perhaps only while `active` says so (room-worker.ts LaneSpec).
 */
export interface PlatformModule {
  sender?: PlatformSender;
  receiver?: Receiver;
  lanes?: (string | LaneSpec)[];
  /** The worker's own check of a queued event's sender against the current bindings. */
  senderCheck?: (event: InboundEvent) => boolean;
  /** The voice tool of an event's room, from the platform's bindings as configured now. */
  voiceOf?: (event: InboundEvent) => VoiceTool | undefined;
  /**
   * The lane of a room of this module's platform, when not the default (`lanes.ts`):
   * e.g. encrypted rooms in a lane only the process owning the device serves. Every
   * process configured alike must give the same answer.
   */
  laneOf?: (room: string) => string | undefined;
}

/** Builds a platform module from the runtime's shared parts. */
export type PlatformFactory = (deps: RuntimeDeps) => PlatformModule;

/** Options of `startRuntime`. */
export interface RuntimeOptions {
  config: Config;
  /** The Redis to use (from `resolveRedis`); or `redisUrl` for one instance. */
  redis?: RedisConnection;
  redisUrl?: string;
  /** Key prefix; default `config.redis.prefix`. */
  prefix?: string;
  log?: Logger;
  /** Run turn workers in this process (default true). */
  workers?: boolean;
  /** Start the platforms' receivers (default true). */
  receivers?: boolean;
  platforms: PlatformFactory[];
  /** Connect every namespace before receiving (default false: each connects on first use). */
  connectNamespaces?: boolean;
  /** Run the proactive parts: bullmq's schedules, mutes and webhooks (default true). */
  proactive?: boolean;
  /**
   * What happens when no Redis client of the process answers, even a new one
   * (ClientWatch): by default the error is logged as one line and the process exits 1,
   * for its supervisor to start it again.
   */
  onRedisLost?: (err: RedisLostError) => void;
  /** How often each Redis client is asked a PING (default 1 s; tests shorten it). */
  redisProbeMs?: number;
}

/** A running roomgate process: adapters, workers, namespaces; `stop` shuts it down in order. */
export interface Runtime {
  deps: RuntimeDeps;
  namespaces: NamespaceRegistry;
  /** The health and metrics server, when `config.http` asks for one. */
  health?: HealthServer;
  /** Schedules, mutes and webhooks, unless turned off. */
  proactive?: ProactiveService;
  /**
   * Shuts down in order: receivers stop, running turns get `graceMs` (default
   * `shutdown.graceSeconds`) to finish, rooms still held are handed back at once.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Wires one process: Redis, the inbox, namespaces, engine and workers, and the given
 * platforms, as a list of parts started in order and stopped in the reverse order
 * (src/core/part.ts). `main` only chooses what to pass here.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const log = options.log ?? createLogger();
  // However the configuration was made, its secrets are masked in everything this process says.
  for (const secret of secretsOf(config)) registerSecret(secret);
  setLibraryLogger(log);
  const keys = new Keys(options.prefix ?? config.redis.prefix, { shards: config.queue.shards });
  const connection = options.redis ?? RedisConnection.single(requiredUrl(options.redisUrl));
  const redis = connection.client;
  redis.on("error", (err: Error) => log.warn({ err: err.message }, "redis connection error"));
  connection.watchClients({
    deadAfterMs: config.redis.deadAfterSeconds * 1000,
    probeEveryMs: options.redisProbeMs ?? 1000,
    log,
    lost:
      options.onRedisLost ??
      ((err) => {
        log.error({ client: err.client, silentSeconds: Math.round(err.silentMs / 1000) }, err.message);
        process.exit(1);
      }),
  });
  const scheduler = new SchedulerScripts(redis, keys, connection.durability(log));
  const modules: PlatformModule[] = [];
  const laneOf = (room: string): string => {
    for (const m of modules) {
      const lane = m.laneOf?.(room);
      if (lane) return lane;
    }
    return defaultLaneOf(room);
  };
  const inbox = new RedisInbox(scheduler, config.queue.dedupeSeconds * 1000, laneOf, () => workers.worker);
  const signals = new RoomSignals(() => connection.create({ name: "room signals" }), keys, log);
  const limiter = new RedisRateLimiter(redis, keys, scheduler.durability);
  const permissions = permissionDeps(config, redis, keys);
  const deps: RuntimeDeps = {
    config,
    redis,
    connection,
    keys,
    scheduler,
    inbox,
    limiter,
    log,
    ...permissions,
  };
  const namespaces = new NamespaceRegistry(config, log);
  namespaces.useTaskLedger(new RedisTaskLedger(redis, keys));
  const leaseMs = Math.round(config.queue.leaseSeconds * 1000);
  const turnRecordMs = Math.round(config.queue.deliveryDeadlineSeconds * 1000) + 3600_000;

  modules.push(...options.platforms.map((factory) => factory(deps)));
  const senders = new Map<string, PlatformSender>();
  const lanes: (string | LaneSpec)[] = [];
  for (const m of modules) {
    if (!m.sender) continue;
    senders.set(m.sender.platform, m.sender);
    lanes.push(...(m.lanes ?? [m.sender.platform]));
  }
  const runner = turnRunner({
    deps,
    signals,
    modules,
    senders,
    namespaces,
    proactive: () => proactive.service,
    recent: (entry) => inbox.takeRecent(entry),
  });

  const parts = new PartList(log);
  const proactive = proactivePart({
    config,
    redis,
    connection,
    durability: scheduler.durability,
    keys,
    inbox,
    limiter,
    log,
    worker: options.workers ?? true,
    reconcile: options.receivers ?? true,
    workerName: `roomgate-${process.pid}`,
    namespaces,
  });
  const working = (options.workers ?? true) && lanes.length > 0;
  const health = healthPart({
    config,
    connection,
    log,
    parts,
    serving: working,
    proactive: () => proactive.service,
  });
  const workers = workersPart({
    scripts: scheduler,
    blocker: (name, blocksForMs) => connection.create({ name, blocksForMs }),
    runner,
    lanes,
    concurrency: config.worker.concurrency,
    leaseMs,
    turnRecordMs,
    log,
  });
  const receivers =
    (options.receivers ?? true) ? modules.flatMap((m) => (m.receiver ? [m.receiver] : [])) : [];
  // In start order; stopped in the reverse: receivers first, then running turns get their grace.
  const all: RuntimePart[] = [
    redisPart(connection, keys, options.redis === undefined),
    pairedPart(permissions.paired),
    queueProbePart(connection, keys),
    ...((options.proactive ?? true) ? [proactive] : []),
    // Up before any turn runs, so that what a worker does can be watched from its start.
    health,
    namespacesPart(namespaces, options.connectNamespaces ?? false, log),
    signalsPart(signals),
    ...(working
      ? [
          renewalsPart(connection, keys, leaseMs, log, () => workers.worker),
          workers,
          approvalSweepPart(permissions.audit, log),
        ]
      : []),
    ...receiverParts(receivers, log),
  ];
  const stop = (graceMs = config.shutdown.graceSeconds * 1000) => parts.stop(graceMs);
  try {
    for (const part of all) await parts.start(part);
  } catch (err) {
    // A failed start leaves nothing running: workers, namespace children and connections go too.
    await stop(0).catch((stopErr: unknown) =>
      log.warn({ err: stopErr }, "cleanup after a failed start failed"),
    );
    throw err;
  }
  return { deps, namespaces, health: health.server, proactive: proactive.service, stop };
}

function requiredUrl(url: string | undefined): string {
  if (!url) throw new RoomgateError("startRuntime needs `redis` or `redisUrl`");
  return url;
}
