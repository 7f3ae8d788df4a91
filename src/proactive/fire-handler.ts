import type { Job } from "bullmq";
import type { Logger } from "../core/log.js";
import { scheduleFiresTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../sessions/rate-limiter.js";
import type { ProactiveInbox } from "./proactive-inbox.js";
import type { ProactiveHandler } from "./proactive-queue.js";
import { ScheduleBook } from "./schedule-book.js";
import { fireEventId, fireTimeOf } from "./schedule-ids.js";

/**
 * Takes one fire of a schedule: the only thing it does is put one event into the
 * room's inbox, with the id `sched:<schedule>:<fire time>`. bullmq produces each
 * fire's job once (the next one is added, idempotently by producer id, when this one
 * is taken) and may hand it to a second worker after a crash; the inbox keeps one
 * event per id, so each fire is exactly one turn.
 */
export function fireHandler(deps: {
  book: ScheduleBook;
  inbox: ProactiveInbox;
  limiter: RedisRateLimiter;
  keys: Keys;
  /** A fire taken later than this after its time was missed while roomgate was down. */
  lateMs: number;
  log: Logger;
}): ProactiveHandler {
  return async (job: Job) => {
    const id = job.repeatJobKey;
    const data = ScheduleBook.fireData(job);
    if (!data || !id) {
      deps.log.error({ job: job.id }, "schedule fire with unreadable data; dropped");
      return "unreadable";
    }
    const metric = data.origin === "config" ? data.label : "room";
    const at = fireTimeOf(job.id, id) ?? job.opts.prevMillis ?? job.timestamp;
    const count = (result: string) => {
      scheduleFiresTotal.inc({ schedule: metric, result });
      return result;
    };
    const log = deps.log.child({ schedule: id, room: data.room, fireAt: new Date(at).toISOString() });
    if (!(await deps.book.exists(id))) {
      log.info("fire of a removed schedule; dropped");
      return count("removed");
    }
    const lateMs = Date.now() - at;
    if (lateMs > deps.lateMs && data.missed === "skip") {
      log.warn({ lateMs }, "fire missed while roomgate was down; skipped (missed: skip)");
      return count("skipped_missed");
    }
    const wait = await deps.limiter.tryAcquire([
      { key: deps.keys.rate(`schedule:${id}`, "fires"), max: data.perMinute, windowMs: 60_000 },
    ]);
    if (wait > 0) {
      log.warn({ perMinute: data.perMinute }, "schedule over its cap (perMinute); fire skipped");
      return count("skipped_cap");
    }
    const result = await deps.inbox.put({
      eventId: fireEventId(id, at),
      room: data.room,
      namespace: data.namespace,
      source: { type: "schedule", name: data.label, at },
      text: data.ask,
    });
    if (lateMs > deps.lateMs) log.info({ lateMs }, "fire missed while roomgate was down; run once now");
    log.debug({ result }, "schedule fired");
    return count(result);
  };
}
