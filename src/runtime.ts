import type { Inbox, PlatformSender, Receiver } from "./core/adapter.js";
import type { Config } from "./core/config.js";
import { allBindings, bindingFinder } from "./access/bindings.js";
import { RoomgateError } from "./core/errors.js";
import type { InboundEvent } from "./core/event.js";
import { setLibraryLogger } from "./core/library-log.js";
import { createLogger, type Logger } from "./core/log.js";
import { liveChannel } from "./control/live-channel.js";
import { RoomInboxReader } from "./control/room-inbox-reader.js";
import { RoomSignals } from "./control/room-signals.js";
import { takesHistory } from "./engine/arguments.js";
import { Engine } from "./engine/engine.js";
import type { VoiceTool } from "./core/adapter.js";
import { NamespaceRegistry } from "./namespace/namespace-registry.js";
import { startHealthServer, type HealthServer } from "./ops/health-server.js";
import { healthStatus } from "./ops/health-status.js";
import { PairingGate } from "./access/pairing-gate.js";
import { watchQueue } from "./ops/queue-probe.js";
import { laneOf as defaultLaneOf } from "./queue/lanes.js";
import { preloadScripts } from "./queue/lua-scripts.js";
import { RedisInbox } from "./queue/redis-inbox.js";
import type { LaneSpec } from "./queue/lane-state.js";
import { RoomWorker } from "./queue/room-worker.js";
import { SchedulerScripts } from "./queue/scheduler-scripts.js";
import { TurnRunner } from "./queue/turn-runner.js";
import { startProactive, type ProactiveService } from "./proactive/proactive-service.js";
import { AuditLog } from "./sessions/audit-log.js";
import { Keys } from "./sessions/keys.js";
import { checkLayout } from "./sessions/layout.js";
import { PairedUsers } from "./sessions/paired-users.js";
import { PairingCodes } from "./sessions/pairing-codes.js";
import { RedisRateLimiter, reserveSlotScript } from "./sessions/rate-limiter.js";
import type { RedisLostError } from "./sessions/client-watch.js";
import { RedisConnection, type RedisClient } from "./sessions/redis-connection.js";
import { RedisSessionStore } from "./sessions/session-store.js";
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

/** How often a worker process records approvals that expired undecided. */
const APPROVAL_SWEEP_MS = 15_000;

/**
 * The parts of the runtime that decide who may do what beyond the configuration: the
 * users pairing added (loaded by `paired.start()`), the `/pair` gate and the audit trail.
 */
export function permissionDeps(
  config: Config,
  redis: RedisClient,
  keys: Keys,
): Pick<RuntimeDeps, "paired" | "pairing" | "audit"> {
  const audit = new AuditLog(redis, keys, config.audit.keepDays * 24 * 3600_000);
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
 * Wires one process: Redis, the inbox and kick queues, namespaces, engine and
 * workers, and the given platforms. `main` only chooses what to pass here.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const log = options.log ?? createLogger();
  setLibraryLogger(log);
  const keys = new Keys(options.prefix ?? config.redis.prefix, { shards: config.queue.shards });
  const connection = options.redis ?? RedisConnection.single(requiredUrl(options.redisUrl));
  const ownConnection = options.redis === undefined;
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
  let worker: RoomWorker | undefined;
  const inbox = new RedisInbox(scheduler, config.queue.dedupeSeconds * 1000, laneOf, () => worker);
  const watching = {
    inbox: new RoomInboxReader(redis, keys),
    signals: new RoomSignals(() => connection.create(), keys, log),
    recheckMs: Math.round(config.queue.recheckSeconds * 1000),
  };
  const limiter = new RedisRateLimiter(redis, scheduler.durability);
  watchQueue(redis, keys);
  const permissions = permissionDeps(config, redis, keys);
  const { paired } = permissions;
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
  const deadlineMs = Math.round(config.queue.deliveryDeadlineSeconds * 1000);
  const turnRecordMs = deadlineMs + 3600_000;
  const store = new RedisSessionStore(redis, keys, { ...config.sessions, turnRecordMs }, log);
  const senderChecks = new Map<string, (event: InboundEvent) => boolean>();
  const voices = new Map<string, (event: InboundEvent) => VoiceTool | undefined>();
  const engine = new Engine({
    namespaces,
    offerByRef: (room, ref) => store.offerByRef(room, ref),
    settings: {
      maxMessageChars: config.limits.maxMessageChars,
      choiceSeconds: config.sessions.choiceSeconds,
      slotSeconds: config.sessions.slotSeconds,
      approvalSeconds: config.sessions.approvalSeconds,
      files: {
        maxBytes: config.limits.maxFileBytes,
        timeoutMs: config.limits.fileTimeoutSeconds * 1000,
        types: config.limits.fileTypes,
      },
    },
    senderAllowed: (event) => senderChecks.get(event.platform)?.(event) ?? true,
    access: {
      bindingOf: bindingFinder(config),
      paired: (binding, sender) => paired.has(binding, sender),
      audit: permissions.audit,
      enqueue: async (event) => void (await inbox.enqueue(event)),
    },
    voiceOf: (event) => voices.get(event.platform)?.(event),
    proactive: () => proactive?.room,
    log,
  });

  modules.push(...options.platforms.map((factory) => factory(deps)));
  const senders = new Map<string, PlatformSender>();
  const lanes: (string | LaneSpec)[] = [];
  for (const m of modules) {
    if (m.sender && m.senderCheck) senderChecks.set(m.sender.platform, m.senderCheck);
    if (m.sender && m.voiceOf) voices.set(m.sender.platform, m.voiceOf);
    if (!m.sender) continue;
    senders.set(m.sender.platform, m.sender);
    lanes.push(...(m.lanes ?? [m.sender.platform]));
  }

  let health: HealthServer | undefined;
  let proactive: ProactiveService | undefined;
  const sweeps: NodeJS.Timeout[] = [];
  let receivers: Receiver[] = [];
  const stop = async (graceMs = config.shutdown.graceSeconds * 1000) => {
    await health?.close();
    for (const r of receivers)
      await r.stop().catch((err: unknown) => log.warn({ err }, "receiver stop failed"));
    for (const sweep of sweeps) clearInterval(sweep);
    await worker?.stop(graceMs);
    await proactive?.close();
    await namespaces.close();
    watching.signals.close();
    paired.stop();
    if (ownConnection) connection.close();
  };
  try {
    // Connected before anything reports on it: /healthz is asked right after a start.
    await redis.ping();
    await checkLayout(redis, keys);
    await preloadScripts(redis, [reserveSlotScript]);
    await paired.start();
    if (options.proactive ?? true) {
      proactive = await startProactive({
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
    }
    const serving = (options.workers ?? true) && lanes.length > 0;
    // Up before any turn runs, so that what a worker does can be watched from its start.
    health = config.http
      ? await startHealthServer({
          ...config.http,
          redis,
          log,
          checks: serving ? { worker: () => worker?.healthy() ?? false } : {},
          routes: proactive?.routes ?? [],
        })
      : undefined;
    worker = await startWorker();
    if (options.connectNamespaces) await connectAll(namespaces, log);
    receivers = await startReceivers(
      (options.receivers ?? true) ? modules.flatMap((m) => (m.receiver ? [m.receiver] : [])) : [],
      log,
    );
  } catch (err) {
    // A failed start leaves nothing running: workers, namespace children and connections go too.
    await stop(0).catch((stopErr: unknown) =>
      log.warn({ err: stopErr }, "cleanup after a failed start failed"),
    );
    throw err;
  }

  return { deps, namespaces, health, proactive, stop };

  async function startWorker(): Promise<RoomWorker | undefined> {
    if (!((options.workers ?? true) && lanes.length > 0)) return undefined;
    // The last answer per namespace, for the finish path, which must not wait on a namespace.
    const wanted = new Map<string, boolean>();
    const historyWanted = async (namespace: string, cachedOnly = false): Promise<boolean> => {
      if (cachedOnly) return wanted.get(namespace) ?? false;
      try {
        const tools = await namespaces.get(namespace).tools();
        const takes = tools.some((t) => takesHistory(t.inputSchema));
        wanted.set(namespace, takes);
        return takes;
      } catch {
        // The engine reports an unreachable namespace; no tool can take the history then.
        return false;
      }
    };
    const runner = new TurnRunner({
      engine,
      store,
      senders,
      limiter,
      historyWanted,
      log,
      channel: (event, sender) => liveChannel(event, sender, watching, log),
      settings: {
        deadlineMs,
        retryMaxMs: Math.round(config.queue.retryMaxSeconds * 1000),
        typingAfterMs: config.queue.typingAfterSeconds * 1000,
        idleSeconds: config.sessions.idleSeconds,
        maxComputeDeaths: config.queue.maxComputeDeaths,
      },
    });
    const started = new RoomWorker({
      scripts: scheduler,
      blocker: (name) => connection.create({ name }),
      runner,
      lanes,
      concurrency: config.worker.concurrency,
      leaseMs,
      turnRecordMs,
      log,
    });
    await started.start();
    // Approvals nobody decided in time are recorded as expired, by whichever process sweeps first.
    const sweep = setInterval(() => {
      permissions.audit
        .sweep()
        .catch((err: unknown) => log.warn({ err }, "sweeping expired approvals failed"));
    }, APPROVAL_SWEEP_MS);
    sweep.unref();
    sweeps.push(sweep);
    return started;
  }
}

function requiredUrl(url: string | undefined): string {
  if (!url) throw new RoomgateError("startRuntime needs `redis` or `redisUrl`");
  return url;
}

/** Connects every namespace now, so that the start log shows which ones work; a failure is not fatal. */
async function connectAll(namespaces: NamespaceRegistry, log: Logger): Promise<void> {
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
}

/**
 * Starts every receiver; one that fails is logged and reported in /healthz while
 * the others run. Only when every receiver failed does the start fail.
 */
async function startReceivers(all: Receiver[], log: Logger): Promise<Receiver[]> {
  const started: Receiver[] = [];
  let firstFailure: unknown;
  for (const [i, receiver] of all.entries()) {
    try {
      await receiver.start();
      started.push(receiver);
    } catch (err) {
      firstFailure ??= err;
      const reason = err instanceof RoomgateError ? err.userText : String(err);
      log.error({ err, receiver: receiver.constructor.name }, "a receiver could not start; the others run");
      healthStatus.degrade(`receiver ${i + 1} (${receiver.constructor.name})`, reason);
    }
  }
  if (started.length === 0 && firstFailure !== undefined) throw firstFailure;
  return started;
}
