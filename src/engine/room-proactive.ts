/** A room's schedule as /schedule list shows it. */
export interface RoomScheduleView {
  /** How it repeats, as the person would write it: `every 30m`, `cron 0 8 * * 1-5 (Europe/Berlin)`. */
  repeat: string;
  ask: string;
  /** The next fire (ms), when known. */
  next?: number;
  /** The config name of a configured schedule (those cannot be removed from the room). */
  name?: string;
  /** Who added it with /schedule add (a sender id), when that was recorded. */
  by?: string;
}

/** How a schedule a room adds repeats: a cron pattern in a time zone, or an interval. */
export type RoomRepeat = { cron: string; tz?: string } | { every: number };

/**
 * What a room's /schedule and /mute need from the proactive parts (bullmq's schedules,
 * the room's mute), so the engine's steps know no queue. Absent where nothing runs them.
 */
export interface RoomProactive {
  /** The room's own schedules (numbered from 1 in this order), then the configured ones. */
  schedules(room: string): Promise<{ added: RoomScheduleView[]; configured: RoomScheduleView[] }>;
  /** Adds a schedule for `by` (a sender id), or says why not (the room's cap, too short an interval). */
  addSchedule(
    room: string,
    namespace: string,
    repeat: RoomRepeat,
    ask: string,
    by: string,
  ): Promise<{ added: RoomScheduleView } | { problem: string }>;
  /** Removes the room's n-th schedule; false when there is none. */
  removeSchedule(room: string, n: number): Promise<RoomScheduleView | undefined>;
  /** Holds the room's proactive turns until `untilMs`. */
  mute(room: string, untilMs: number): Promise<void>;
  /** Ends the mute now; returns what became of held turns. */
  unmute(room: string): Promise<string>;
  /** Until when the room is muted, and how many turns are held. */
  muteState(room: string): Promise<{ until?: number; held: number }>;
  /** The longest mute accepted, ms. */
  readonly maxMuteMs: number;
}
