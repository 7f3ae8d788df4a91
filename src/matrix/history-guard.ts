import { RoomEventSchema, SyncJoinedRoomsSchema } from "./matrix-events.js";

/**
 * The events of one sync response that are history, decided by their order in the
 * timeline, never by `origin_server_ts` (which the sender's server sets, so one skewed
 * clock would silence a room): everything in the first sync of a fresh start, and in a
 * room the bot joins, everything up to its own join. Replays after a restart are stopped
 * elsewhere: by the stored sync token, and by the inbox's de-duplication of event ids.
 */
export function historyOf(raw: unknown, initial: boolean, botUserId: string): Set<string> {
  const skip = new Set<string>();
  const sync = SyncJoinedRoomsSchema.safeParse(raw);
  if (!sync.success) return skip;
  for (const room of Object.values(sync.data.rooms.join)) {
    const timeline = (room.timeline?.events ?? []).flatMap((e) => {
      const parsed = RoomEventSchema.safeParse(e);
      return parsed.success ? [parsed.data] : [];
    });
    const join = timeline.findLastIndex(
      (e) => e.type === "m.room.member" && e.state_key === botUserId && e.content.membership === "join",
    );
    const until = initial ? timeline.length : join + 1;
    for (const event of timeline.slice(0, until)) skip.add(event.event_id);
  }
  return skip;
}
