import { createCipheriv, createDecipheriv, randomBytes, scrypt } from "node:crypto";

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** scrypt cost: about 0.1 s once per load, so a guessed MATRIX_STORE_KEY costs as much per try. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/**
 * AES-256-GCM over the crypto store, with a key derived (scrypt) from MATRIX_STORE_KEY
 * and the store's own random salt. Sealed bytes are iv | tag | ciphertext; the
 * additional data binds them to the device, so one device's store cannot be passed
 * off as another's.
 */
export class StoreCipher {
  private constructor(
    private readonly key: Buffer,
    /** The salt the key was derived with, kept in the store's metadata. */
    readonly salt: Buffer,
  ) {}

  /** Derives the key for a store; without `salt`, for a new store with a fresh one. */
  static async derive(storeKey: string, salt: Buffer = randomBytes(16)): Promise<StoreCipher> {
    const key = await new Promise<Buffer>((resolve, reject) =>
      scrypt(storeKey, salt, KEY_BYTES, SCRYPT, (err, derived) => (err ? reject(err) : resolve(derived))),
    );
    return new StoreCipher(key, salt);
  }

  /** Encrypts `plain`, bound to `aad`. */
  seal(plain: Buffer, aad: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  }

  /** Decrypts what `seal` made with the same key and `aad`; throws when either differs or the bytes changed. */
  open(sealed: Buffer, aad: string): Buffer {
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error("sealed store is too short");
    const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  }
}
