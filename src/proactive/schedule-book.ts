import type { Job, RepeatOptions } from "bullmq";
import { z } from "zod";
import type { ScheduleConfig } from "../core/config/proactive.js";
import type { Logger } from "../core/log.js";
import type { ProactiveQueue } from "./proactive-queue.js";
import { configScheduleId, roomScheduleId, roomSchedulePrefix } from "./schedule-ids.js";

/** A schedule's repeat: a cron pattern in a time zone, or an interval in ms. */
export type Repeat = { cron: string; tz?: string } | { every: number };

/** What each fire of a schedule carries (bullmq's job template data), parsed when a fire is taken. */
export const FireDataSchema = z.object({
  room: z.string().min(1),
  namespace: z.string().min(1),
  ask: z.string().min(1),
  /** `config`: from the configuration, `room`: added with /schedule add. */
  origin: z.enum(["config", "room"]),
  /** How the schedule is shown: its config name, or the repeat a room wrote. */
  label: z.string(),
  missed: z.enum(["once", "skip"]),
  perMinute: z.number().int().positive(),
  /** Who added a room's schedule (a sender id), so that they, or an approver, may remove it. */
  by: z.string().optional(),
});
export type FireData = z.infer<typeof FireDataSchema>;

/** One schedule as /schedule list shows it. */
export interface ScheduleEntry {
  id: string;
  data: FireData;
  repeat: Repeat;
  /** The next fire time (ms), when bullmq has one. */
  next?: number;
}

function repeatOptions(repeat: Repeat): Omit<RepeatOptions, "key"> {
  return "cron" in repeat
    ? { pattern: repeat.cron, ...(repeat.tz ? { tz: repeat.tz } : {}) }
    : { every: repeat.every };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The schedules, held by bullmq's job schedulers (one producer per fire across all
 * processes, idempotent by id): the configuration's, reconciled at start, and those
 * rooms add with /schedule. bullmq is the only record of them, so nothing can
 * disagree with what fires.
 */
export class ScheduleBook {
  constructor(
    private readonly queue: ProactiveQueue,
    private readonly log: Logger,
  ) {}

  /**
   * Makes the configured schedules exactly what bullmq holds: a new or changed one is
   * upserted, one no longer configured is removed, and one unchanged is left alone, so
   * a restart neither moves its next fire nor drops a fire that is due.
   */
  async reconcile(schedules: { config: ScheduleConfig; namespace: string }[]): Promise<void> {
    const existing = new Map((await this.all()).map((e) => [e.id, e]));
    const wanted = new Set<string>();
    for (const { config, namespace } of schedules) {
      const id = configScheduleId(config.name);
      wanted.add(id);
      const repeat: Repeat =
        config.cron !== undefined
          ? { cron: config.cron, ...(config.tz ? { tz: config.tz } : {}) }
          : { every: config.every! };
      const data: FireData = {
        room: config.room,
        namespace,
        ask: config.ask,
        origin: "config",
        label: config.name,
        missed: config.missed,
        perMinute: config.perMinute,
      };
      const now = existing.get(id);
      if (now && sameJson(now.repeat, repeat) && sameJson(now.data, data)) continue;
      await this.upsert(id, repeat, data);
      this.log.info(
        { schedule: config.name, room: config.room },
        now ? "schedule changed" : "schedule added",
      );
    }
    for (const id of existing.keys()) {
      if (!id.startsWith("cfg.") || wanted.has(id)) continue;
      await this.queue.queue.removeJobScheduler(id);
      this.log.info({ schedule: id }, "schedule no longer configured; removed");
    }
  }

  /** Adds a room's schedule; returns its id. */
  async addForRoom(room: string, repeat: Repeat, data: Omit<FireData, "origin" | "room">): Promise<string> {
    const id = roomScheduleId(room, Date.now());
    await this.upsert(id, repeat, { ...data, room, origin: "room" });
    return id;
  }

  /** The room's schedules: the ones it added (oldest first, as /schedule remove numbers them), then the configured ones. */
  async forRoom(room: string): Promise<{ added: ScheduleEntry[]; configured: ScheduleEntry[] }> {
    const all = await this.all();
    const prefix = roomSchedulePrefix(room);
    const added = all.filter((e) => e.id.startsWith(prefix)).sort((a, b) => a.id.localeCompare(b.id));
    const configured = all.filter((e) => e.id.startsWith("cfg.") && e.data.room === room);
    return { added, configured };
  }

  /** Removes a schedule: its pending fire goes with it, so it never fires again. */
  async remove(id: string): Promise<boolean> {
    return this.queue.queue.removeJobScheduler(id);
  }

  /** The schedule as bullmq holds it now (its repeat and next fire), or undefined once removed. */
  async get(id: string): Promise<ScheduleEntry | undefined> {
    const s = await this.queue.queue.getJobScheduler(id);
    if (!s) return undefined;
    const data = FireDataSchema.safeParse(s.template?.data);
    if (!data.success) return undefined;
    const repeat: Repeat =
      s.pattern !== undefined && s.pattern !== null
        ? { cron: s.pattern, ...(s.tz ? { tz: s.tz } : {}) }
        : { every: Number(s.every) };
    return { id, data: data.data, repeat, ...(s.next ? { next: Number(s.next) } : {}) };
  }

  /** The data of a fire job, or undefined when it is unreadable. */
  static fireData(job: Job): FireData | undefined {
    const parsed = FireDataSchema.safeParse(job.data);
    return parsed.success ? parsed.data : undefined;
  }

  private async upsert(id: string, repeat: Repeat, data: FireData): Promise<void> {
    await this.queue.queue.upsertJobScheduler(id, repeatOptions(repeat), {
      name: "fire",
      data,
      opts: this.queue.jobOptions,
    });
  }

  private async all(): Promise<ScheduleEntry[]> {
    const raw = await this.queue.queue.getJobSchedulers(0, -1, true);
    const out: ScheduleEntry[] = [];
    for (const s of raw) {
      const data = FireDataSchema.safeParse(s.template?.data);
      if (!data.success) continue;
      const repeat: Repeat =
        s.pattern !== undefined && s.pattern !== null
          ? { cron: s.pattern, ...(s.tz ? { tz: s.tz } : {}) }
          : { every: Number(s.every) };
      out.push({ id: s.key, data: data.data, repeat, ...(s.next ? { next: Number(s.next) } : {}) });
    }
    return out;
  }
}
