import { randomUUID } from "node:crypto";
import { Worker, type ConnectionOptions, type Job } from "bullmq";
import type { Redis } from "ioredis";
import { InboundEventSchema } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import { KickSchema, type KickQueues } from "./kick-queues.js";
import { laneOf } from "./lanes.js";
import type { QueueScripts } from "./scripts.js";
import type { TurnRunner } from "./turn-runner.js";

const LEASE_MS = 15_000;
const RENEW_MS = 5_000;
const SWEEP_MS = 30_000;
/** Delivery retries of one turn before it is given up (logged); the outcome is kept, so retries resend only. */
const TURN_ATTEMPTS = 5;

/**
 * Drains rooms: a kick job makes the worker take the room's lease, run its inbox's
 * events one at a time in arrival order, and release the lease only when the inbox
 * is empty. Rooms run in parallel up to `concurrency`; one room never runs twice at once.
 */
export class RoomWorker {
  private readonly workers: Worker[] = [];
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly id = randomUUID();

  constructor(
    private readonly options: {
      redis: Redis;
      connection: ConnectionOptions;
      keys: Keys;
      scripts: QueueScripts;
      kicks: KickQueues;
      runner: TurnRunner;
      lanes: string[];
      concurrency: number;
      log: Logger;
    },
  ) {}

  /** Starts consuming every lane and sweeping for rooms whose kick was lost. */
  async start(): Promise<void> {
    const { connection, keys, lanes, concurrency } = this.options;
    for (const lane of lanes) {
      const worker = new Worker(keys.turnQueue(lane), (job) => this.process(job), {
        connection,
        prefix: keys.bullPrefix,
        concurrency,
        maxStalledCount: 10,
      });
      worker.on("error", (err) => this.options.log.error({ err, lane }, "queue worker error"));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((w) => w.waitUntilReady()));
    await this.sweep();
    this.sweepTimer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.options.log.warn({ err }, "inbox sweep failed"));
    }, SWEEP_MS);
    this.sweepTimer.unref();
  }

  /** Stops taking work; turns in progress finish first. */
  async stop(): Promise<void> {
    clearInterval(this.sweepTimer);
    await Promise.all(this.workers.map((w) => w.close()));
  }

  private async process(job: Job): Promise<void> {
    const { room } = KickSchema.parse(job.data);
    const { redis, keys, scripts } = this.options;
    const token = `${this.id}:${job.id}`;
    const acquired = await redis.set(keys.lease(room), token, "PX", LEASE_MS, "NX");
    // Another worker holds the room: it drains up to the last event before it lets go.
    if (acquired !== "OK") return;
    let lost = false;
    const renew = setInterval(() => {
      scripts
        .renewLease(keys.lease(room), token, LEASE_MS)
        .then((ok) => {
          if (ok === 0) lost = true;
        })
        .catch(() => undefined);
    }, RENEW_MS);
    try {
      while (!lost) {
        const head = await redis.lindex(keys.inbox(room), 0);
        if (head === null) {
          if ((await scripts.releaseLease(keys.lease(room), keys.inbox(room), token)) === 1) return;
          continue;
        }
        await this.handle(room, head);
        await scripts.popHead(keys.inbox(room), head);
      }
      this.options.log.warn({ room }, "room lease lost; another worker continues");
    } finally {
      clearInterval(renew);
    }
  }

  private async handle(room: string, head: string): Promise<void> {
    const log = this.options.log.child({ room });
    let json: unknown;
    try {
      json = JSON.parse(head);
    } catch {
      json = undefined;
    }
    const parsed = InboundEventSchema.safeParse(json);
    if (!parsed.success) {
      log.error({ issues: parsed.error.issues.slice(0, 3) }, "unreadable event dropped from inbox");
      return;
    }
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.options.runner.run(parsed.data);
        return;
      } catch (err) {
        if (attempt >= TURN_ATTEMPTS) {
          log.error({ err, turn: parsed.data.eventId }, "turn given up after retries");
          return;
        }
        const delay = 500 * 2 ** attempt;
        log.warn({ err, turn: parsed.data.eventId, attempt, delay }, "turn failed; retrying");
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Re-kicks rooms that have waiting events and no lease holder (a kick lost to a crash). */
  private async sweep(): Promise<void> {
    const { redis, keys, kicks, lanes } = this.options;
    const mine = new Set(lanes);
    const prefix = `${keys.prefix}:{`;
    let cursor = "0";
    do {
      const [next, found] = await redis.scan(cursor, "MATCH", keys.inboxPattern, "COUNT", 500);
      cursor = next;
      for (const key of found) {
        const room = key.slice(prefix.length, key.length - "}:inbox".length);
        const lane = safeLane(room);
        if (lane === undefined || !mine.has(lane)) continue;
        const [len, leased] = await Promise.all([redis.llen(key), redis.exists(keys.lease(room))]);
        if (len > 0 && leased === 0) await kicks.kick(room);
      }
    } while (cursor !== "0");
  }
}

function safeLane(room: string): string | undefined {
  try {
    return laneOf(room);
  } catch {
    return undefined;
  }
}
