import cronParser from "cron-parser";
import type { ProactiveSettings } from "../core/config/proactive.js";
import type { RoomProactive, RoomRepeat, RoomScheduleView } from "../engine/room-proactive.js";
import { durationText, repeatText } from "../engine/schedule-spec.js";
import type { RoomMutes } from "./room-mutes.js";
import type { ScheduleBook, ScheduleEntry } from "./schedule-book.js";

/** The longest /mute: held posts are kept a little longer than this. */
const MAX_MUTE_MS = 30 * 24 * 3600_000;

function view(entry: ScheduleEntry): RoomScheduleView {
  return {
    repeat: repeatText(entry.repeat),
    ask: entry.data.ask,
    ...(entry.next !== undefined ? { next: entry.next } : {}),
    ...(entry.data.origin === "config" ? { name: entry.data.label } : {}),
    ...(entry.data.by !== undefined ? { by: entry.data.by } : {}),
  };
}

/** The shortest gap between a cron pattern's next fires (ms), to hold it to the room's minimum. */
function cronGap(cron: string, tz?: string): number {
  const it = cronParser.parseExpression(cron, tz ? { tz } : {});
  let prev = it.next().getTime();
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 20; i++) {
    const next = it.next().getTime();
    gap = Math.min(gap, next - prev);
    prev = next;
  }
  return gap;
}

/**
 * What /schedule and /mute do, on bullmq's schedules and the room's mute, within the
 * room's limits: at most `roomSchedules` schedules, none more often than `minEverySeconds`.
 */
export function roomPort(book: ScheduleBook, mutes: RoomMutes, settings: ProactiveSettings): RoomProactive {
  return {
    maxMuteMs: MAX_MUTE_MS,
    async schedules(room) {
      const { added, configured } = await book.forRoom(room);
      return { added: added.map(view), configured: configured.map(view) };
    },
    async addSchedule(room, namespace, repeat: RoomRepeat, ask, by) {
      const { added } = await book.forRoom(room);
      if (added.length >= settings.roomSchedules) {
        return {
          problem: `This room has ${added.length} schedules, the most it may have (proactive.roomSchedules). Remove one first.`,
        };
      }
      const minMs = settings.minEverySeconds * 1000;
      const gap = "every" in repeat ? repeat.every : cronGap(repeat.cron, repeat.tz);
      if (gap < minMs) {
        return {
          problem: `A room's schedule may fire at most every ${durationText(minMs)} (proactive.minEverySeconds); this one fires every ${durationText(gap)}.`,
        };
      }
      const id = await book.addForRoom(room, repeat, {
        namespace,
        ask,
        label: repeatText(repeat),
        missed: "once",
        perMinute: 60,
        by,
      });
      const entry = (await book.forRoom(room)).added.find((e) => e.id === id);
      return { added: entry ? view(entry) : { repeat: repeatText(repeat), ask } };
    },
    async removeSchedule(room, n) {
      const entry = (await book.forRoom(room)).added[n - 1];
      if (!entry) return undefined;
      await book.remove(entry.id);
      return view(entry);
    },
    mute: (room, untilMs) => mutes.mute(room, untilMs),
    unmute: (room) => mutes.unmute(room),
    async muteState(room) {
      const until = await mutes.mutedUntil(room);
      return { ...(until !== undefined ? { until } : {}), held: await mutes.held(room) };
    },
  };
}
