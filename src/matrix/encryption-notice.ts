import { createHash } from "node:crypto";
import type { MatrixClient } from "matrix-bot-sdk";
import type { Logger } from "../core/log.js";
import { withMatrixRetry } from "./matrix-retry.js";
import type { RedisStorageProvider } from "./redis-storage-provider.js";

/** What an encrypted bound room is told, once. */
export const ENCRYPTION_NOTICE =
  "End-to-end encryption is not supported by this bot yet, so it cannot read this room and will not answer here. " +
  "Bind an unencrypted room to it instead.";

/**
 * Tells an encrypted bound room, once ever, that the bot cannot read it, and logs an
 * error for the operator. "Once" survives restarts (a mark in the bot's storage hash)
 * and races (the send's transaction id derives from the room, so a repeat is
 * swallowed by the homeserver).
 */
export class EncryptionNotice {
  private readonly known = new Set<string>();

  constructor(
    private readonly client: MatrixClient,
    private readonly storage: RedisStorageProvider,
    private readonly log: Logger,
  ) {}

  /** Whether the room is known to be encrypted. */
  isEncrypted(roomId: string): boolean {
    return this.known.has(roomId);
  }

  /** Asks the homeserver whether the room has encryption switched on. */
  async check(roomId: string): Promise<boolean> {
    try {
      await this.client.getRoomStateEvent(roomId, "m.room.encryption", "");
      return true;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return false;
      throw err;
    }
  }

  /** Marks the room encrypted; the first time ever, sends the notice and logs an error. */
  async encrypted(roomId: string): Promise<void> {
    if (this.known.has(roomId)) return;
    this.known.add(roomId);
    const mark = `e2ee-notice:${roomId}`;
    if ((await this.storage.readValue(mark)) !== null) return;
    this.log.error({ roomId }, "bound Matrix room is end-to-end encrypted; the bot cannot read it");
    const txnId = `rg-e2ee-${createHash("sha256").update(roomId).digest("base64url").slice(0, 24)}`;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${txnId}`;
    await withMatrixRetry(
      "encryption notice",
      () => this.client.doRequest("PUT", path, null, { msgtype: "m.notice", body: ENCRYPTION_NOTICE }),
      this.log,
    );
    await this.storage.storeValue(mark, String(Date.now()));
  }
}
