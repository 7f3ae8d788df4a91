import bs58 from "bs58";
import { randomBytes } from "node:crypto";
import { RoomgateError } from "../../core/errors.js";

/** The two bytes every Matrix key representation starts with (spec appendix, "Cryptographic key representation"). */
const PREFIX = [0x8b, 0x01] as const;
const KEY_BYTES = 32;

/** A recovery key that is not a Matrix key representation: why, without the key itself. */
export class InvalidRecoveryKeyError extends RoomgateError {
  constructor(reason: string, options: { cause?: unknown } = {}) {
    super(`matrix: the recovery key is not valid: ${reason}`, options);
  }
}

/**
 * A private key as the Matrix spec presents it to people: 0x8B 0x01, the key, a parity
 * byte (every byte before it XORed), base58 with the Bitcoin alphabet, a space after
 * every 4th character. Element shows and reads the recovery key in this form.
 */
export function encodeRecoveryKey(key: Uint8Array): string {
  if (key.length !== KEY_BYTES)
    throw new InvalidRecoveryKeyError(`a key has ${KEY_BYTES} bytes, not ${key.length}`);
  const bytes = new Uint8Array(PREFIX.length + KEY_BYTES + 1);
  bytes.set(PREFIX, 0);
  bytes.set(key, PREFIX.length);
  bytes[bytes.length - 1] = bytes.subarray(0, -1).reduce((parity, b) => parity ^ b, 0);
  return (bs58.encode(bytes).match(/.{1,4}/g) ?? []).join(" ");
}

/** The 32 key bytes of a recovery key; whitespace is ignored. Throws InvalidRecoveryKeyError. */
export function decodeRecoveryKey(text: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(text.replace(/\s+/g, ""));
  } catch (err) {
    throw new InvalidRecoveryKeyError("it has characters outside the base58 alphabet", { cause: err });
  }
  if (bytes.length !== PREFIX.length + KEY_BYTES + 1) {
    throw new InvalidRecoveryKeyError(
      "it has the wrong length (a recovery key is 48 characters, in groups of 4)",
    );
  }
  if (bytes[0] !== PREFIX[0] || bytes[1] !== PREFIX[1])
    throw new InvalidRecoveryKeyError("it has the wrong prefix");
  if (bytes.reduce((parity, b) => parity ^ b, 0) !== 0) {
    throw new InvalidRecoveryKeyError("its check byte does not match (a character is wrong)");
  }
  return bytes.slice(PREFIX.length, PREFIX.length + KEY_BYTES);
}

/** A new random secret-storage key. */
export function newRecoveryKey(): Uint8Array {
  return new Uint8Array(randomBytes(KEY_BYTES));
}
