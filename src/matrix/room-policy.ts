import { matrixBinding } from "../core/bindings.js";
import type { MatrixConfig } from "../core/config.js";
import { powerLevelOf } from "./classify-event.js";
import type { PowerLevels } from "./matrix-events.js";

/** One configured room: its namespace and who may talk in it or invite the bot to it. */
export interface RoomBinding {
  roomId: string;
  /** The binding's name, for pairing and the audit trail. */
  name: string;
  namespace: string;
  users: ReadonlySet<string>;
  /** Users at or above this power level may talk too. */
  powerLevel?: number;
  inviters: ReadonlySet<string>;
  /** Which messages are taken; unset: every message in a direct room, addressed ones elsewhere. */
  respond?: "mentions" | "all";
}

/**
 * The configured rooms by room id. Inviters are `matrix.inviters` when set, else the
 * room's own users: whoever may talk in a room may bring the bot into it.
 */
export function roomBindings(config: Pick<MatrixConfig, "rooms" | "inviters">): Map<string, RoomBinding> {
  const global = new Set(config.inviters);
  return new Map(
    config.rooms.map((room) => [
      room.room,
      {
        roomId: room.room,
        name: matrixBinding(room),
        namespace: room.namespace,
        users: new Set(room.users),
        ...(room.powerLevel === undefined ? {} : { powerLevel: room.powerLevel }),
        ...(room.respond === undefined ? {} : { respond: room.respond }),
        inviters: global.size > 0 ? global : new Set(room.users),
      },
    ]),
  );
}

/** Whether a user may reach the room's namespace: listed, paired, or at or above the room's power level. */
export function isAllowed(
  binding: RoomBinding,
  userId: string,
  levels: PowerLevels | undefined,
  paired?: (binding: string, senderId: string) => boolean,
): boolean {
  if (binding.users.has(userId) || paired?.(binding.name, userId)) return true;
  if (binding.powerLevel === undefined || levels === undefined) return false;
  return powerLevelOf(levels, userId) >= binding.powerLevel;
}

/** Whether the bot accepts this user's invite into the room. */
export function mayInvite(binding: RoomBinding | undefined, inviter: string): boolean {
  return binding !== undefined && binding.inviters.has(inviter);
}
