import { matrixBindings, type Binding } from "../access/bindings.js";
import { mayAsk, type PairedCheck } from "../access/rules.js";
import type { MatrixConfig } from "../core/config.js";
import { powerLevelOf } from "./classify-event.js";
import type { PowerLevels } from "./matrix-events.js";

/**
 * One configured room: its binding (who may talk in it or invite the bot to it, see
 * src/access) with what the adapter routes by: the room, its namespace and which
 * messages it takes.
 */
export interface RoomBinding extends Binding {
  roomId: string;
  namespace: string;
  /** Which messages are taken; unset: every message in a direct room, addressed ones elsewhere. */
  respond?: "mentions" | "all";
}

/** The configured rooms by room id. */
export function roomBindings(config: Pick<MatrixConfig, "rooms" | "inviters">): Map<string, RoomBinding> {
  const bindings = matrixBindings(config);
  return new Map(
    config.rooms.map((room, i) => [
      room.room,
      {
        ...bindings[i]!,
        roomId: room.room,
        namespace: room.namespace,
        ...(room.respond === undefined ? {} : { respond: room.respond }),
      },
    ]),
  );
}

/**
 * Whether a user may reach the room's namespace (src/access/rules.ts `mayAsk`): listed,
 * paired, or at or above the room's power level, read from the room's levels when the
 * binding admits by level.
 */
export function isAllowed(
  binding: RoomBinding,
  userId: string,
  levels: PowerLevels | undefined,
  paired?: PairedCheck,
): boolean {
  const level = binding.powerLevel === undefined || !levels ? undefined : powerLevelOf(levels, userId);
  return mayAsk(binding, userId, { paired, level });
}
