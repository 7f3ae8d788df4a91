import type { ConnectionOptions } from "bullmq";
import { Redis } from "ioredis";
import type { Inbox, PlatformSender, Receiver } from "./core/adapter.js";
import type { Config } from "./core/config.js";
import { createLogger, type Logger } from "./core/log.js";
import { liveChannel } from "./control/live-channel.js";
import { SideChannel } from "./control/side-channel.js";
import { Engine } from "./engine/engine.js";
import { NamespaceRegistry } from "./namespace/namespace-registry.js";
import { startHealthServer, type HealthServer } from "./ops/health-server.js";
import { KickQueues } from "./queue/kick-queues.js";
import { RedisInbox } from "./queue/redis-inbox.js";
import { RoomWorker } from "./queue/room-worker.js";
import { QueueScripts } from "./queue/scripts.js";
import { TurnRunner } from "./queue/turn-runner.js";
import { Keys } from "./sessions/keys.js";
import { RedisRateLimiter } from "./sessions/rate-limiter.js";
import { RedisSessionStore } from "./sessions/session-store.js";

/** What a platform module is built from. */
export interface RuntimeDeps {
  config: Config;
  redis: Redis;
  keys: Keys;
  inbox: Inbox;
  limiter: RedisRateLimiter;
  log: Logger;
}

/** One platform's halves; `lanes` are the queue lanes its sender serves (default: its platform). */
export interface PlatformModule {
  sender?: PlatformSender;
  receiver?: Receiver;
  lanes?: string[];
}

/** Builds a platform module from the runtime's shared parts. */
export type PlatformFactory = (deps: RuntimeDeps) => PlatformModule;

/** Options of `startRuntime`. */
export interface RuntimeOptions {
  config: Config;
  redisUrl: string;
  /** Key prefix; default `config.redis.prefix`. */
  prefix?: string;
  log?: Logger;
  /** Run turn workers in this process (default true). */
  workers?: boolean;
  /** Start the platforms' receivers (default true). */
  receivers?: boolean;
  platforms: PlatformFactory[];
}

/** A running roomgate process: adapters, workers, namespaces; `stop` shuts it down in order. */
export interface Runtime {
  deps: RuntimeDeps;
  namespaces: NamespaceRegistry;
  /** The health and metrics server, when `config.http` asks for one. */
  health?: HealthServer;
  stop(): Promise<void>;
}

/**
 * Wires one process: Redis, the inbox and kick queues, namespaces, engine and
 * workers, and the given platforms. `main` only chooses what to pass here.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config } = options;
  const log = options.log ?? createLogger();
  const keys = new Keys(options.prefix ?? config.redis.prefix);
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  redis.on("error", (err) => log.warn({ err: err.message }, "redis connection error"));
  const connection: ConnectionOptions = { url: options.redisUrl, maxRetriesPerRequest: null };
  const scripts = new QueueScripts(redis);
  const kicks = new KickQueues(connection, keys);
  const side = new SideChannel(redis, keys);
  const inbox = side.tap(new RedisInbox(keys, scripts, kicks));
  const limiter = new RedisRateLimiter(redis);
  const deps: RuntimeDeps = { config, redis, keys, inbox, limiter, log };
  const namespaces = new NamespaceRegistry(config, log);
  const store = new RedisSessionStore(redis, keys, config.sessions, log);
  const engine = new Engine({
    namespaces,
    offerByRef: (room, ref) => store.offerByRef(room, ref),
    settings: {
      maxMessageChars: config.limits.maxMessageChars,
      choiceSeconds: config.sessions.choiceSeconds,
    },
    log,
  });

  const modules = options.platforms.map((factory) => factory(deps));
  const senders = new Map<string, PlatformSender>();
  const lanes: string[] = [];
  for (const m of modules) {
    if (!m.sender) continue;
    senders.set(m.sender.platform, m.sender);
    lanes.push(...(m.lanes ?? [m.sender.platform]));
  }

  let worker: RoomWorker | undefined;
  if ((options.workers ?? true) && lanes.length > 0) {
    worker = new RoomWorker({
      redis,
      connection,
      keys,
      scripts,
      kicks,
      runner: new TurnRunner(engine, store, senders, log, (event, sender) =>
        liveChannel(event, sender, side, (turnId) => store.ledger(event.room, turnId), log),
      ),
      lanes,
      concurrency: config.worker.concurrency,
      log,
    });
    await worker.start();
  }
  const receivers =
    (options.receivers ?? true) ? modules.flatMap((m) => (m.receiver ? [m.receiver] : [])) : [];
  for (const r of receivers) await r.start();
  const health = config.http ? await startHealthServer({ ...config.http, redis, log }) : undefined;

  return {
    deps,
    namespaces,
    health,
    async stop() {
      await health?.close();
      for (const r of receivers)
        await r.stop().catch((err: unknown) => log.warn({ err }, "receiver stop failed"));
      await worker?.stop();
      await kicks.close();
      await namespaces.close();
      redis.disconnect();
    },
  };
}
