import { RoomgateError } from "../../core/errors.js";

const RECOVERY =
  "To start over as a new device: log the bot in again (a new access token is a new device), " +
  "set MATRIX_TOKEN to it and restart; people then see a new, unverified session of the bot (docs/matrix.md, Recovery).";

/**
 * The device's keys are on the homeserver but its crypto store is gone: starting fresh
 * would be a second identity under the same device id, which other clients reject.
 */
export class LostCryptoStoreError extends RoomgateError {
  constructor(
    readonly userId: string,
    readonly deviceId: string,
  ) {
    super(
      `matrix: device ${deviceId} of ${userId} has keys on the homeserver but no crypto store in Redis; ` +
        `refusing to start as a silent new device. ${RECOVERY}`,
    );
  }
}

/** The stored crypto store cannot be opened: a different MATRIX_STORE_KEY, or damaged data. */
export class UnreadableCryptoStoreError extends RoomgateError {
  constructor(
    readonly userId: string,
    readonly deviceId: string,
    options: { cause?: unknown } = {},
  ) {
    super(
      `matrix: the crypto store of device ${deviceId} (${userId}) in Redis cannot be decrypted: ` +
        `MATRIX_STORE_KEY is not the key it was written with, or the data is damaged. ` +
        `Set the original key; if it is lost, so are the device's keys. ${RECOVERY}`,
      options,
    );
  }
}

/** The crypto store in Redis belongs to another identity than the one the machine opened. */
export class MismatchedCryptoStoreError extends RoomgateError {}

/** The device lease was lost while working: another process may own the device now. */
export class DeviceLeaseLostError extends RoomgateError {
  constructor(what: string) {
    super(`matrix: the device lease was lost (${what}); this process no longer owns the device`);
  }
}

/**
 * An event could not be decrypted; `code` is why: its room key is missing or ratcheted
 * past it, its sender's device is not trusted (matrix.trust), the sender's pinned
 * identity changed, or anything else.
 */
export class UndecryptableEventError extends RoomgateError {
  constructor(
    readonly eventId: string,
    readonly code: "missing-key" | "unknown-index" | "untrusted-device" | "identity-changed" | "other",
    readonly sessionId: string | undefined,
    options: {
      cause?: unknown;
      /** For `identity-changed`: which identity (a digest of its master key). */ identity?: string;
    } = {},
  ) {
    super(`matrix: event ${eventId} cannot be decrypted (${code})`, options);
    this.identity = options.identity;
  }

  readonly identity: string | undefined;
}

/**
 * A room has encryption on and this process cannot encrypt for it (encryption off,
 * no store key, or the device owned elsewhere): nothing is sent, never plaintext.
 */
export class EncryptionUnavailableError extends RoomgateError {
  constructor(
    readonly roomId: string,
    readonly reason: string,
  ) {
    super(`matrix: room ${roomId} is end-to-end encrypted and ${reason}; nothing was sent`, {
      userText: "This room is end-to-end encrypted and the bot cannot encrypt here right now.",
    });
  }
}
