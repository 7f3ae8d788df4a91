import type { MatrixClient } from "matrix-bot-sdk";
import type { Logger } from "../../core/log.js";
import { matrixPlaintextRefusedTotal } from "../../ops/metrics.js";
import { EncryptionUnavailableError } from "./crypto-errors.js";
import type { CryptoDevice } from "./crypto-device.js";
import { EncryptedFileSchema, type EncryptedFile } from "../matrix-events.js";
import { encryptAttachment } from "./encrypted-media.js";
import type { EncryptedRooms } from "./encrypted-rooms.js";
import type { RoomAudience } from "./room-audience.js";
import { MEGOLM } from "./room-settings.js";

/** Why this process cannot encrypt: the configuration, or the device being owned elsewhere. */
export type CryptoUnavailable =
  "encryption is off" | "no matrix.storeKey is set" | "another process owns the device";

/** The metric label of each reason (a fixed set: a room's algorithm name is not a label). */
const REASON_LABEL: Record<CryptoUnavailable | "unsupported algorithm", string> = {
  "encryption is off": "encryption_off",
  "no matrix.storeKey is set": "no_store_key",
  "another process owns the device": "not_owner",
  "unsupported algorithm": "unsupported_algorithm",
};

/** How one delivery's events go into one room: as they are, or encrypted for the room's audience. */
export interface RoomSendPlan {
  readonly encrypted: boolean;
  /** The event as it goes on the wire. */
  wire(
    type: string,
    content: Record<string, unknown>,
  ): Promise<{ type: string; content: Record<string, unknown> }>;
  /** Uploads a file for the room; in an encrypted room the ciphertext, with the `file` object to send. */
  upload(bytes: Buffer, mime: string, name: string): Promise<{ url: string } | { file: EncryptedFile }>;
}

/** What deciding a room's plan needs. */
export interface OutboundEncryptionDeps {
  api: MatrixClient;
  rooms: EncryptedRooms;
  audience: RoomAudience;
  /** The device, when this process owns it. */
  device(): CryptoDevice | undefined;
  /** Why there is no device here, when there is none. */
  unavailable(): CryptoUnavailable;
  log: Logger;
}

/**
 * Decides, right before a delivery, whether its room is encrypted, and then encrypts
 * every event and file of it for the room's audience (room-audience.ts). A room with
 * encryption on never gets anything in the clear: when this process cannot encrypt,
 * `plan` throws EncryptionUnavailableError, counts it and nothing is sent.
 */
export class OutboundEncryption {
  constructor(private readonly deps: OutboundEncryptionDeps) {}

  /** The plan for sending into the room now, addressed to `extra` (the person answered) too. */
  async plan(roomId: string, extra: readonly string[] = []): Promise<RoomSendPlan> {
    const { api, rooms, audience } = this.deps;
    const settings = await rooms.settings(roomId);
    if (!settings) {
      return {
        encrypted: false,
        wire: async (type, content) => ({ type, content }),
        upload: async (bytes, mime, name) => ({ url: await api.uploadContent(bytes, mime, name) }),
      };
    }
    const device = this.deps.device();
    const why: CryptoUnavailable | "unsupported algorithm" | undefined = !device
      ? this.deps.unavailable()
      : settings.algorithm !== MEGOLM
        ? "unsupported algorithm"
        : undefined;
    if (!device || why) {
      const reason =
        why === "unsupported algorithm" ? `its algorithm ${settings.algorithm} is not supported` : why;
      matrixPlaintextRefusedTotal.inc({ reason: REASON_LABEL[why ?? "unsupported algorithm"] });
      const error = new EncryptionUnavailableError(roomId, reason ?? "cannot be encrypted for");
      this.deps.log.error({ roomId, reason }, error.message);
      throw error;
    }
    let recipients: Promise<string[]> | undefined;
    const audienceNow = () => (recipients ??= audience.recipients(roomId, settings.historyVisibility, extra));
    return {
      encrypted: true,
      wire: async (type, content) => ({
        type: "m.room.encrypted",
        content: await device.encrypt(roomId, type, content, await audienceNow(), settings),
      }),
      upload: async (bytes) => {
        const { data, file } = await encryptAttachment(bytes);
        const url = await api.uploadContent(data, "application/octet-stream");
        return { file: EncryptedFileSchema.parse({ ...file, url }) };
      },
    };
  }
}
