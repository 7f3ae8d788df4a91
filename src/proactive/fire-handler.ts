import type { Job, RepeatOptions } from "bullmq";
import cronParser from "cron-parser";
import type { Logger } from "../core/log.js";
import { scheduleFiresTotal } from "../ops/metrics.js";
import type { RedisRateLimiter } from "../scheduler/rate-limiter.js";
import type { ProactiveInbox } from "./proactive-inbox.js";
import type { ProactiveHandler } from "./proactive-queue.js";
import { ScheduleBook, type Repeat, type ScheduleEntry } from "./schedule-book.js";
import { fireEventId, fireTimeOf } from "./schedule-ids.js";
import type { WorkerUptime } from "./worker-uptime.js";

/**
 * Takes one fire of a schedule and puts one event into the room's inbox, with the id
 * `sched:<schedule>:<fire time>`; bullmq may hand a fire to a second worker after a
 * crash, and the inbox keeps one event per id, so each period is exactly one turn.
 *
 * It also queues the periods bullmq skipped. bullmq adds a fire's successor in a
 * round trip of its own after a worker took the fire; a process killed in between
 * leaves the scheduler on the taken fire, and when that fire is taken back bullmq
 * goes on from now. The periods between this fire and the scheduler's next were then
 * never produced: those at which a worker was running are this fire's to queue, each
 * under its own id; those that came due while roomgate was down are its missed fires.
 */
export function fireHandler(deps: {
  book: ScheduleBook;
  inbox: ProactiveInbox;
  limiter: RedisRateLimiter;
  uptime: WorkerUptime;
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
    const upSince = await deps.uptime.since();
    const fire = async (fireAt: number): Promise<string> => {
      const wait = await deps.limiter.tryAcquire([
        { group: `schedule:${id}`, scope: "fires", max: data.perMinute, windowMs: 60_000 },
      ]);
      if (wait > 0) {
        log.warn(
          { perMinute: data.perMinute, period: fireAt },
          "schedule over its cap (perMinute); fire skipped",
        );
        return count("skipped_cap");
      }
      return count(
        await deps.inbox.put({
          eventId: fireEventId(id, fireAt),
          room: data.room,
          namespace: data.namespace,
          source: { type: "schedule", name: data.label, at: fireAt },
          text: data.ask,
        }),
      );
    };

    let result: string;
    if (at >= upSince) result = await fire(at);
    else if (data.missed === "skip") {
      log.warn({ upSince }, "fire came due while roomgate was down; skipped (missed: skip)");
      result = count("skipped_missed");
    } else {
      log.info({ upSince }, "fire came due while roomgate was down; run once now (missed: once)");
      result = await fire(at);
    }
    // Periods while roomgate was down are this fire's missed ones: it ran for them, or was skipped.
    const owed = skippedPeriods(job, schedule, at).filter((p) => p >= upSince);
    if (owed.length > 0) {
      log.warn({ periods: owed.length }, "periods bullmq skipped after a crash; queued");
      for (const period of owed) await fire(period);
    }
    log.debug({ result }, "schedule fired");
    return result;
  };
}

/**
 * The periods strictly between a fire and the scheduler's next (none when the
 * schedule changed since the fire was produced: its next is then of another repeat),
 * up to now and at most a thousand.
 */
function skippedPeriods(job: Job, schedule: ScheduleEntry, at: number): number[] {
  if (schedule.next === undefined || !sameRepeat(job.opts.repeat, schedule.repeat)) return [];
  return firesBetween(schedule.repeat, at, Math.min(schedule.next, Date.now() + 1));
}

function sameRepeat(produced: RepeatOptions | undefined, now: Repeat): boolean {
  if (!produced) return false;
  if ("every" in now) return Number(produced.every) === now.every;
  return produced.pattern === now.cron && (produced.tz ?? undefined) === now.tz;
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
