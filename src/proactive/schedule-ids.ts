/** A room key as a token safe in bullmq ids and key names (base64url: no `:`, no spaces). */
export function roomToken(room: string): string {
  return Buffer.from(room, "utf8").toString("base64url");
}

/** The bullmq job scheduler id of a schedule from the configuration. */
export function configScheduleId(name: string): string {
  return `cfg.${name}`;
}

/** The bullmq job scheduler id of a schedule a room added, unique by its creation time. */
export function roomScheduleId(room: string, createdMs: number): string {
  return `room.${roomToken(room)}.${createdMs.toString(36)}`;
}

/** The id prefix shared by every schedule one room added. */
export function roomSchedulePrefix(room: string): string {
  return `room.${roomToken(room)}.`;
}

/**
 * The inbound event id of one fire: the schedule and its fire time, the same in
 * every process that might take the fire, so the inbox keeps exactly one.
 */
export function fireEventId(scheduleId: string, fireMs: number): string {
  return `sched:${scheduleId}:${fireMs}`;
}

/** The fire time of a job a bullmq job scheduler produced (`repeat:<id>:<ms>`), or undefined. */
export function fireTimeOf(jobId: string | undefined, scheduleId: string): number | undefined {
  const prefix = `repeat:${scheduleId}:`;
  if (!jobId?.startsWith(prefix)) return undefined;
  const ms = Number(jobId.slice(prefix.length));
  return Number.isSafeInteger(ms) ? ms : undefined;
}
