import { Queue, Worker, type Job, type JobsOptions } from "bullmq";
import type { Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisClient } from "../sessions/redis-connection.js";

/** The bullmq queue that holds what runs on a clock: schedule fires, mute ends, resource posts. */
export const PROACTIVE_QUEUE = "jobs";

/** The kinds of job on the proactive queue, each with its own handler. */
export type ProactiveJobName = "fire" | "unmute" | "resource";

/** Handles one job; what it returns is kept on the finished job for inspection. */
export type ProactiveHandler = (job: Job) => Promise<string>;

/**
 * A processor's lock: taking a job costs one enqueue, so a short lock lets a job
 * held by a killed process go back to another worker within seconds. A job that
 * stalls again is tried again: every handler is idempotent (events are de-duplicated
 * by id), so a generous stalled count costs nothing.
 */
const LOCK_MS = 5_000;
const STALLED_CHECK_MS = 2_500;
const MAX_STALLED = 20;

/**
 * bullmq's queue and worker for proactive jobs, under roomgate's key prefix with a
 * hash tag (`<prefix>:{proactive}:jobs:…`) so that every key of the queue is in one
 * Redis Cluster slot. Handlers only put events into room inboxes; turns run in the
 * room scheduler as any other. Its client is one of its own from the process's
 * connection factory (an ioredis Cluster on a cluster, Sentinel-aware behind
 * Sentinel); the worker's blocking connection is bullmq's duplicate of it.
 */
export class ProactiveQueue {
  readonly queue: Queue;
  private worker: Worker | undefined;
  private readonly handlers = new Map<ProactiveJobName, ProactiveHandler>();

  constructor(
    private readonly connection: RedisClient,
    private readonly keys: Keys,
    private readonly log: Logger,
    readonly keepJobsSeconds: number,
  ) {
    this.queue = new Queue(PROACTIVE_QUEUE, { connection, prefix: keys.bullmqPrefix });
    this.queue.on("error", (err) => log.warn({ err: err.message }, "proactive queue error"));
  }

  /** Options of every job: retried with backoff when Redis fails, kept a while for inspection. */
  get jobOptions(): JobsOptions {
    return {
      attempts: 8,
      backoff: { type: "exponential", delay: 1000 },
      removeOnComplete: { age: this.keepJobsSeconds, count: 10_000 },
      removeOnFail: { age: 7 * this.keepJobsSeconds },
    };
  }

  /** Names the handler of one kind of job. */
  handle(name: ProactiveJobName, handler: ProactiveHandler): void {
    this.handlers.set(name, handler);
  }

  /** Adds a one-off job; a job id already used is not added twice (bullmq keeps ids unique). */
  async add(name: ProactiveJobName, data: unknown, jobId: string, delayMs = 0): Promise<void> {
    await this.queue.add(name, data, { ...this.jobOptions, jobId, delay: Math.max(0, delayMs) });
  }

  /** Starts taking jobs in this process. */
  async startWorker(concurrency: number, workerName: string): Promise<void> {
    const worker = new Worker(PROACTIVE_QUEUE, (job) => this.process(job), {
      connection: this.connection,
      prefix: this.keys.bullmqPrefix,
      concurrency,
      name: workerName,
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
      maxStalledCount: MAX_STALLED,
    });
    worker.on("error", (err) => this.log.warn({ err: err.message }, "proactive worker error"));
    worker.on("failed", (job, err) =>
      this.log.error({ err, job: job?.id, attempts: job?.attemptsMade }, "proactive job failed"),
    );
    await worker.waitUntilReady();
    this.worker = worker;
  }

  private async process(job: Job): Promise<string> {
    const handler = this.handlers.get(job.name as ProactiveJobName);
    if (!handler) {
      this.log.error({ job: job.id, name: job.name }, "proactive job of an unknown kind; dropped");
      return "unknown";
    }
    return handler(job);
  }

  /**
   * Stops the worker and the queue's connections, waiting at most `waitMs` for a
   * running job (each is one enqueue) or for a Redis that is away: a job cut short is
   * taken again once its lock runs out, and its event is de-duplicated.
   */
  async close(waitMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    const closing = (async () => {
      await this.worker?.close();
      await this.queue.close();
    })().catch((err: unknown) => this.log.warn({ err }, "proactive queue did not close cleanly"));
    await Promise.race([closing, late]);
    clearTimeout(timer);
    // Still closing (Redis away): the worker's own blocking connection is cut, not left retrying.
    void this.worker?.close(true).catch(() => undefined);
    this.connection.disconnect();
  }
}
