import type { RedisClient, RedisConnection } from "../sessions/redis-connection.js";
import type { Durability } from "../scheduler/durable-write.js";
import type { Inbox } from "../core/adapter.js";
import type { Config } from "../core/config.js";
import type { Logger } from "../core/log.js";
import type { NamespaceRegistry } from "../namespace/namespace-registry.js";
import type { HttpRoute } from "../ops/health-server.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";
import { fireHandler } from "./fire-handler.js";
import { hookRoute, type BoundHook } from "./hook-route.js";
import type { RoomProactive } from "../engine/room-proactive.js";
import { ProactiveInbox } from "./proactive-inbox.js";
import { roomPort } from "./room-port.js";
import { ProactiveQueue } from "./proactive-queue.js";
import { resourceBindings, ResourcePosts } from "./resource-posts.js";
import { roomTarget } from "../core/room-target.js";
import { RoomMutes, UnmuteJobSchema } from "./room-mutes.js";
import { ScheduleBook } from "./schedule-book.js";
import { WorkerUptime } from "./worker-uptime.js";

/** How many proactive jobs one process takes at once: each is a single enqueue. */
const CONCURRENCY = 4;

/** The running proactive parts of one process. */
export interface ProactiveService {
  queue: ProactiveQueue;
  book: ScheduleBook;
  mutes: RoomMutes;
  inbox: ProactiveInbox;
  /** The HTTP routes it serves (`POST /hooks/<name>`). */
  routes: HttpRoute[];
  /** What a room's /schedule and /mute do. */
  room: RoomProactive;
  close(): Promise<void>;
}

/**
 * Starts what makes rooms speak first (DESIGN §8a): bullmq's queue and, in processes
 * that work, its worker (every job only puts events into inboxes); with `reconcile`
 * (the processes that receive), the configured schedules are made what bullmq holds
 * and the bindings' resources are subscribed.
 */
export async function startProactive(options: {
  config: Config;
  redis: RedisClient;
  /** Where the bullmq queue's own client comes from (the same topology as `redis`). */
  connection: RedisConnection;
  /** How writes a sender is told about (a held webhook delivery) wait for replicas. */
  durability: Durability;
  keys: Keys;
  inbox: Inbox;
  limiter: RedisRateLimiter;
  log: Logger;
  worker: boolean;
  reconcile: boolean;
  workerName: string;
  namespaces: NamespaceRegistry;
}): Promise<ProactiveService> {
  const { config, redis, keys, limiter } = options;
  const log = options.log.child({ part: "proactive" });
  const settings = config.proactive;
  const queue = new ProactiveQueue(
    options.connection.create({ name: "proactive queue" }),
    keys,
    log,
    settings.keepJobsSeconds,
  );
  // The inbox releases a room whose mute ended while it held an event; the mutes release through the inbox.
  const release = { to: async (room: string): Promise<unknown> => room };
  const inbox = new ProactiveInbox(redis, keys, options.inbox, options.durability, async (room) => {
    await release.to(room);
  });
  const mutes = new RoomMutes(redis, keys, queue, inbox, settings.afterMute, log);
  release.to = (room) => mutes.release(room);
  const book = new ScheduleBook(queue, log);
  const uptime = new WorkerUptime(redis, keys.proactiveUptime, settings.downSeconds * 1000, log);
  queue.handle("fire", fireHandler({ book, inbox, limiter, uptime, log }));
  queue.handle("unmute", (job) => mutes.release(UnmuteJobSchema.parse(job.data).room));
  const resources = new ResourcePosts({
    queue,
    redis,
    keys,
    inbox,
    namespaces: options.namespaces,
    bindings: resourceBindings(config),
    throttleMs: settings.resourceThrottleSeconds * 1000,
    log,
  });
  queue.handle("resource", (job) => resources.post(job));

  try {
    if (options.reconcile) {
      await book.reconcile(bind(config, config.schedules, log, "schedule"));
      resources.watch();
    }
    if (options.worker) {
      // In the run of workers before taking a job, so no period it takes looks missed.
      await uptime.start();
      await queue.startWorker(CONCURRENCY, options.workerName);
    }
  } catch (err) {
    uptime.stop();
    await queue.close().catch(() => undefined);
    throw err;
  }
  const hooks: BoundHook[] = bind(config, config.hooks, log, "hook");
  return {
    queue,
    book,
    mutes,
    inbox,
    routes:
      hooks.length > 0
        ? [
            hookRoute({
              hooks,
              inbox,
              limiter,
              redis,
              durability: options.durability,
              keys,
              log,
              badSignaturesPerMinute: settings.badSignaturesPerMinute,
            }),
          ]
        : [],
    room: roomPort(book, mutes, settings),
    close: async () => {
      uptime.stop();
      await queue.close();
    },
  };
}

/** Pairs each schedule or hook with its room's namespace; one whose room has none is left out, loudly. */
function bind<T extends { name: string; room: string; namespace?: string }>(
  config: Config,
  items: T[],
  log: Logger,
  what: string,
): { config: T; namespace: string }[] {
  return items.flatMap((item) => {
    const target = roomTarget(config, item.room, item.namespace);
    if ("namespace" in target) return [{ config: item, namespace: target.namespace }];
    log.error({ [what]: item.name, room: item.room }, `${what} left out: ${target.problem}`);
    return [];
  });
}
