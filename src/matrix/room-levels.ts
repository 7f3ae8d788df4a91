import type { MatrixClient } from "matrix-bot-sdk";
import type { Logger } from "../core/log.js";
import { PowerLevelsSchema, type PowerLevels } from "./matrix-events.js";
import { withMatrixRetry } from "./matrix-retry.js";

/**
 * The bound rooms' power levels, for bindings that allow users by level: read once
 * from the room's state, then kept current from sync (`set`). Shared by who may talk
 * (the receiver) and who gets an encrypted room's keys (crypto/room-audience.ts).
 */
export class RoomLevels {
  private readonly levels = new Map<string, PowerLevels>();

  constructor(
    private readonly api: MatrixClient,
    private readonly log: Logger,
  ) {}

  /** Sets the room's levels as sync showed them. */
  set(roomId: string, levels: PowerLevels): void {
    this.levels.set(roomId, levels);
  }

  /** The room's levels; undefined when they cannot be read (then only listed users count; the next call asks again). */
  async of(roomId: string): Promise<PowerLevels | undefined> {
    const known = this.levels.get(roomId);
    if (known) return known;
    try {
      const content: unknown = await withMatrixRetry(
        "power levels",
        () => this.api.getRoomStateEvent(roomId, "m.room.power_levels", ""),
        this.log,
      );
      const levels = PowerLevelsSchema.parse(content ?? {});
      this.levels.set(roomId, levels);
      return levels;
    } catch (err) {
      this.log.warn({ err, roomId }, "cannot read the room's power levels");
      return undefined;
    }
  }
}
