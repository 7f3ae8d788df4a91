import type { RedisClient } from "../../sessions/redis-connection.js";
import type { MatrixClient } from "matrix-bot-sdk";
import { z } from "zod";
import type { Logger } from "../../core/log.js";
import { MatrixRequestError } from "../matrix-errors.js";
import { withMatrixRetry } from "../matrix-retry.js";
import { roomCryptoSettings, type RoomCryptoSettings } from "./room-settings.js";

const SettingsSchema = z.object({
  algorithm: z.string(),
  rotationPeriodMs: z.number(),
  rotationPeriodMessages: z.number(),
  historyVisibility: z.string(),
});

/** How long "this room is not encrypted" is believed before the homeserver is asked again. */
const PLAIN_FOR_MS = 5_000;

/**
 * Which rooms have end-to-end encryption on, and their settings, for every process:
 * what sync showed (`record`), kept in one Redis hash per bot account (encryption is
 * never switched off again, so an entry stays), and otherwise asked of the homeserver
 * right before a send. "Not encrypted" is believed for a few seconds only, so a room
 * that turns encryption on never gets plaintext for longer than that window.
 */
export class EncryptedRooms {
  private readonly known = new Map<string, RoomCryptoSettings>();
  private readonly plainUntil = new Map<string, number>();

  constructor(
    private readonly api: MatrixClient,
    /** Shared knowledge of every process; without it, this process's memory and the homeserver. */
    private readonly redis: RedisClient | undefined,
    /** `keys.matrixEncryptedRooms(userId)`. */
    private readonly key: string,
    private readonly log: Logger,
  ) {}

  /** Whether the room is known to be encrypted, without any I/O. */
  isKnown(roomId: string): boolean {
    return this.known.has(roomId);
  }

  /** Records the room's `m.room.encryption` (from sync); returns its settings (null if the content is unusable). */
  async record(roomId: string, encryption: unknown, historyVisibility?: string): Promise<RoomCryptoSettings> {
    const previous = this.known.get(roomId);
    const settings = roomCryptoSettings(encryption, historyVisibility ?? previous?.historyVisibility) ?? {
      // Encryption is on even when its content is unusable: nothing goes there in the clear.
      algorithm: "unknown",
      rotationPeriodMs: 0,
      rotationPeriodMessages: 0,
      historyVisibility: historyVisibility ?? "shared",
    };
    await this.remember(roomId, settings);
    return settings;
  }

  /** Records a history visibility change of an encrypted room. */
  async visibility(roomId: string, historyVisibility: string): Promise<void> {
    const known = this.known.get(roomId) ?? (await this.stored(roomId));
    if (known) await this.remember(roomId, { ...known, historyVisibility });
  }

  /**
   * The room's encryption settings, or null when it is not encrypted: from memory,
   * Redis, or the room's state on the homeserver. Throws when the homeserver cannot
   * say (the caller must not send in the clear on a guess).
   */
  async settings(roomId: string): Promise<RoomCryptoSettings | null> {
    const known = this.known.get(roomId) ?? (await this.stored(roomId));
    if (known) {
      this.known.set(roomId, known);
      return known;
    }
    if ((this.plainUntil.get(roomId) ?? 0) > Date.now()) return null;
    const encryption = await this.state(roomId, "m.room.encryption");
    if (encryption === null) {
      this.plainUntil.set(roomId, Date.now() + PLAIN_FOR_MS);
      return null;
    }
    const visibility = z
      .object({ history_visibility: z.string() })
      .safeParse(await this.state(roomId, "m.room.history_visibility").catch(() => null));
    return this.record(
      roomId,
      encryption,
      visibility.success ? visibility.data.history_visibility : undefined,
    );
  }

  private async remember(roomId: string, settings: RoomCryptoSettings): Promise<void> {
    this.plainUntil.delete(roomId);
    const changed = JSON.stringify(this.known.get(roomId)) !== JSON.stringify(settings);
    this.known.set(roomId, settings);
    if (changed) await this.redis?.hset(this.key, roomId, JSON.stringify(settings));
  }

  private async stored(roomId: string): Promise<RoomCryptoSettings | undefined> {
    const raw = (await this.redis?.hget(this.key, roomId)) ?? null;
    if (raw === null) return undefined;
    const parsed = SettingsSchema.safeParse(JSON.parse(raw));
    if (parsed.success) return parsed.data;
    this.log.warn({ roomId }, "matrix: unreadable encrypted-room record; asking the homeserver");
    return undefined;
  }

  /** One state event's content, null when the room has none. */
  private async state(roomId: string, type: string): Promise<unknown> {
    try {
      return await withMatrixRetry(
        `${type} state`,
        () => this.api.getRoomStateEvent(roomId, type, ""),
        this.log,
      );
    } catch (err) {
      if (err instanceof MatrixRequestError && err.status === 404) return null;
      throw err;
    }
  }
}
