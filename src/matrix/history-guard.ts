import type { Redis } from "ioredis";
import { matrixRoom } from "../core/room.js";
import type { Keys } from "../sessions/keys.js";

/**
 * Keeps a room's history from being answered: each room has a floor (the
 * origin_server_ts of the last handled event, in `keys.lastSeen`), and an event older
 * than its room's floor is never handed on. A room without a floor gets one when the
 * bot first sees it: the newest event of an initial sync, or the bot's own join.
 *
 * One receiver syncs per bot account, so the read-then-write of the floor does not race.
 */
export class HistoryGuard {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** The room's floor, or null when the bot has never handled anything there. */
  async floor(roomId: string): Promise<number | null> {
    const raw = await this.redis.get(this.keys.lastSeen(matrixRoom(roomId)));
    return raw === null ? null : Number(raw);
  }

  /** Sets the floor of a room that has none yet. */
  async initialise(roomId: string, ts: number): Promise<void> {
    await this.redis.set(this.keys.lastSeen(matrixRoom(roomId)), String(ts), "NX");
  }

  /** Whether an event is older than what was already handled in its room. */
  async isHistory(roomId: string, ts: number): Promise<boolean> {
    const floor = await this.floor(roomId);
    return floor !== null && ts < floor;
  }

  /** Raises the floor to a handled event's timestamp. */
  async handled(roomId: string, ts: number): Promise<void> {
    const floor = await this.floor(roomId);
    if (floor === null || ts > floor)
      await this.redis.set(this.keys.lastSeen(matrixRoom(roomId)), String(ts));
  }
}
