import { createHash } from "node:crypto";
import type { MatrixClient } from "matrix-bot-sdk";
import type { MatrixConfig } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { ignoredTotal } from "../ops/metrics.js";
import type { EncryptedRooms } from "./crypto/encrypted-rooms.js";
import type { RoomEvent } from "./matrix-events.js";
import { withMatrixRetry } from "./matrix-retry.js";
import type { RedisStorageProvider } from "./redis-storage-provider.js";

/** What an unencrypted bound room is told, once, when the bot serves encrypted rooms only. */
export const UNENCRYPTED_NOTICE =
  "This room is not end-to-end encrypted, and this bot answers in encrypted rooms only. " +
  "Turn on encryption in the room's settings and it will answer here.";

/**
 * Which bound rooms the receiver reads, by `matrix.encryption`: an encrypted room needs
 * a process that can encrypt (encryption not off, a store key), and `required` reads
 * encrypted rooms only. A room the bot cannot serve is logged at every start; an
 * unencrypted one under `required` is told once ever why the bot is silent. An
 * encrypted one it cannot serve is told nothing, since nothing goes into an encrypted
 * room in the clear.
 */
export class EncryptionPolicy {
  private readonly warned = new Set<string>();

  constructor(
    private readonly mode: MatrixConfig["encryption"],
    /** Whether this deployment can encrypt (encryption not off, a store key set). */
    private readonly capable: boolean,
    /** Why it cannot, for the log. */
    private readonly reason: string,
    private readonly rooms: EncryptedRooms,
    private readonly storage: RedisStorageProvider,
    private readonly api: MatrixClient,
    private readonly log: Logger,
  ) {}

  /** Whether the receiver reads the room's events, as far as known now (no I/O). */
  serves(roomId: string): boolean {
    return this.rooms.isKnown(roomId) ? this.capable : this.mode !== "required";
  }

  /** Whether the room is known to have encryption on. */
  isEncrypted(roomId: string): boolean {
    return this.rooms.isKnown(roomId);
  }

  /**
   * Whether an event is one that came in the clear into an encrypted room, and so is
   * not read: it could have been written by the homeserver itself. State events are
   * always in the clear and are read.
   */
  clearInEncrypted(roomId: string, event: RoomEvent, cameEncrypted: boolean, botUserId: string): boolean {
    if (cameEncrypted || event.state_key !== undefined || !this.rooms.isKnown(roomId)) return false;
    if (event.sender !== botUserId && event.type !== "m.room.encrypted") {
      ignoredTotal.inc({ platform: "matrix", reason: "unencrypted_in_encrypted_room" });
      this.log.debug(
        { roomId, eventId: event.event_id, type: event.type },
        "matrix: unencrypted event in an encrypted room; ignored",
      );
    }
    return true;
  }

  /** Looks at each joined bound room once at start: encrypted or not, and whether it is served. */
  async checkAtStart(roomIds: readonly string[]): Promise<void> {
    const unreadable: string[] = [];
    const plain: string[] = [];
    for (const roomId of roomIds) {
      const settings = await this.rooms.settings(roomId);
      if (settings && !this.capable) unreadable.push(roomId);
      if (!settings && this.mode === "required") plain.push(roomId);
    }
    // Every start says which bound rooms the bot cannot read, not only the first time.
    if (unreadable.length > 0) {
      for (const roomId of unreadable) this.warned.add(roomId);
      this.log.error(
        { rooms: unreadable, reason: this.reason },
        "matrix: these bound rooms are end-to-end encrypted and will not be answered",
      );
    }
    if (plain.length > 0) {
      this.log.error(
        { rooms: plain },
        "matrix: these bound rooms are not encrypted and matrix.encryption is required; they will not be answered",
      );
      for (const roomId of plain) await this.tellUnencrypted(roomId);
    }
  }

  /** Sync showed `m.room.encryption` in a bound room: it is encrypted from now on. */
  async encryptionOn(roomId: string, content: unknown, historyVisibility?: string): Promise<void> {
    await this.rooms.record(roomId, content, historyVisibility);
    if (!this.capable && !this.warned.has(roomId)) {
      this.warned.add(roomId);
      this.log.error(
        { roomId, reason: this.reason },
        "matrix: bound room is end-to-end encrypted and will not be answered",
      );
    }
  }

  /** An unencrypted room under `required` hears once ever why the bot does not answer. */
  async tellUnencrypted(roomId: string): Promise<void> {
    const mark = `unencrypted-notice:${roomId}`;
    if ((await this.storage.readValue(mark)) !== null) return;
    // Checked again right before: a room that turned encryption on gets nothing in the clear.
    if (await this.rooms.settings(roomId)) return;
    const txnId = `rg-plain-${createHash("sha256").update(roomId).digest("base64url").slice(0, 24)}`;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txnId}`;
    await withMatrixRetry(
      "unencrypted room notice",
      () => this.api.doRequest("PUT", path, null, { msgtype: "m.notice", body: UNENCRYPTED_NOTICE }),
      this.log,
    );
    await this.storage.storeValue(mark, String(Date.now()));
  }
}
