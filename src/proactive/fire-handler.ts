import type { Job } from "bullmq";
import cronParser from "cron-parser";
import type { Logger } from "../core/log.js";
import { scheduleFiresTotal } from "../ops/metrics.js";
import type { Keys } from "../sessions/keys.js";
import type { RedisRateLimiter } from "../sessions/rate-limiter.js";
import type { ProactiveInbox } from "./proactive-inbox.js";
import type { ProactiveHandler } from "./proactive-queue.js";
import { ScheduleBook, type Repeat } from "./schedule-book.js";
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
    const schedule = await deps.book.get(id);
    if (!schedule) {
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
    const put = (fireAt: number) =>
      deps.inbox.put({
        eventId: fireEventId(id, fireAt),
        room: data.room,
        namespace: data.namespace,
        source: { type: "schedule", name: data.label, at: fireAt },
        text: data.ask,
      });
    const result = await put(at);
    if (lateMs > deps.lateMs) log.info({ lateMs }, "fire missed while roomgate was down; run once now");
    // A job taken back from a process that died holding it, before it added the next
    // fire: bullmq then went on from now, so the periods in between were never produced.
    // They are this job's to queue (each once, by id), as far back as lateMs.
    if (job.stalledCounter > 0 && schedule.next !== undefined) {
      const now = Date.now();
      for (const fireAt of firesBetween(schedule.repeat, at, schedule.next)) {
        if (now - fireAt <= deps.lateMs) count(await put(fireAt));
      }
    }
    log.debug({ result }, "schedule fired");
    return count(result);
  };
}

/** The fire times strictly between two fires of a repeat (at most a thousand). */
function firesBetween(repeat: Repeat, after: number, before: number): number[] {
  const out: number[] = [];
  if ("every" in repeat) {
    for (let t = after + repeat.every; t < before && out.length < 1000; t += repeat.every) out.push(t);
    return out;
  }
  const it = cronParser.parseExpression(repeat.cron, {
    currentDate: new Date(after),
    ...(repeat.tz ? { tz: repeat.tz } : {}),
  });
  for (let t = it.next().getTime(); t < before && out.length < 1000; t = it.next().getTime()) out.push(t);
  return out;
}
