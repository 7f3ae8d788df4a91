import { z } from "zod";
import {
  PowerLevelsSchema,
  RoomEventSchema,
  SyncJoinedRoomsSchema,
  type PowerLevels,
} from "./matrix-events.js";

/** What one joined room's part of a sync response changes before its events are read. */
export interface RoomStateChanges {
  roomId: string;
  /**
   * Power levels from the state section (changed outside the timeline, in a gap); the
   * timeline's own changes apply in order, as its events are read.
   */
  levels?: PowerLevels;
  /** The content of `m.room.encryption`, when the response carries it. */
  encryption?: Record<string, unknown>;
  /** The room's history visibility, when the response carries it. */
  historyVisibility?: string;
  /** Whether any membership changed (the key recipients must be read again). */
  members: boolean;
}

const VisibilitySchema = z.object({ history_visibility: z.string() });

/**
 * Reads each joined room of a sync response for the state the receiver keeps before
 * its events: encryption, history visibility and membership changes (from the state
 * section and the timeline, later events winning) and gap power levels.
 */
export function scanJoinedRooms(raw: unknown): RoomStateChanges[] {
  const sync = SyncJoinedRoomsSchema.safeParse(raw);
  if (!sync.success) return [];
  return Object.entries(sync.data.rooms.join).map(([roomId, room]) => {
    const parse = (list: unknown[] | undefined) =>
      (list ?? []).map((e) => RoomEventSchema.safeParse(e)).flatMap((e) => (e.success ? [e.data] : []));
    const gap = parse(room.state?.events);
    const events = [...gap, ...parse(room.timeline?.events)];
    const state = (type: string) => events.findLast((e) => e.type === type && e.state_key === "");
    const gapLevels = gap.findLast((e) => e.type === "m.room.power_levels" && e.state_key === "");
    const levels = PowerLevelsSchema.safeParse(gapLevels?.content);
    const visibility = VisibilitySchema.safeParse(state("m.room.history_visibility")?.content);
    const encryption = state("m.room.encryption")?.content;
    return {
      roomId,
      ...(gapLevels && levels.success ? { levels: levels.data } : {}),
      ...(encryption ? { encryption } : {}),
      ...(visibility.success ? { historyVisibility: visibility.data.history_visibility } : {}),
      members: events.some((e) => e.type === "m.room.member"),
    };
  });
}
