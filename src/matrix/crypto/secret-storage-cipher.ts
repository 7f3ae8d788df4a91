import { createCipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/** The only secret-storage algorithm the spec defines. */
export const AES_HMAC_SHA2 = "m.secret_storage.v1.aes-hmac-sha2";

/** One secret encrypted under one key (`AesHmacSha2EncryptedData`): base64 fields, padded or not. */
export const EncryptedSecretSchema = z.looseObject({
  iv: z.string(),
  ciphertext: z.string(),
  mac: z.string(),
});
export type EncryptedSecret = z.infer<typeof EncryptedSecretSchema>;

/** Unpadded base64, as the spec writes binary values; decoding accepts padding too. */
export const unpadded = (bytes: Uint8Array): string =>
  Buffer.from(bytes).toString("base64").replace(/=+$/, "");

const HKDF_SALT = Buffer.alloc(32);

/** The AES and HMAC keys for secret `name`: HKDF-SHA-256 of the storage key, a zero salt, the name as info. */
function deriveKeys(key: Uint8Array, name: string): { aes: Buffer; hmac: Buffer } {
  const bits = Buffer.from(hkdfSync("sha256", key, HKDF_SALT, Buffer.from(name, "utf8"), 64));
  return { aes: bits.subarray(0, 32), hmac: bits.subarray(32) };
}

function ctr(aes: Buffer, iv: Buffer, data: Buffer): Buffer {
  const cipher = createCipheriv("aes-256-ctr", aes, iv);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

/**
 * Encrypts a secret for secret storage (`m.secret_storage.v1.aes-hmac-sha2`): AES-CTR-256
 * under a fresh IV whose bit 63 is 0 (some AES-CTR implementations carry into the upper
 * half, others do not), then HMAC-SHA-256 over the ciphertext.
 */
export function encryptSecret(
  plain: string,
  key: Uint8Array,
  name: string,
  iv?: Uint8Array,
): EncryptedSecret {
  const { aes, hmac } = deriveKeys(key, name);
  const counter = Buffer.from(iv ?? randomBytes(16));
  if (!iv) counter[8] = (counter[8] ?? 0) & 0x7f;
  const ciphertext = ctr(aes, counter, Buffer.from(plain, "utf8"));
  const mac = createHmac("sha256", hmac).update(ciphertext).digest();
  return { iv: unpadded(counter), ciphertext: unpadded(ciphertext), mac: unpadded(mac) };
}

/** Decrypts a secret; throws when its MAC does not match (another key, another name, or changed). */
export function decryptSecret(data: EncryptedSecret, key: Uint8Array, name: string): string {
  const { aes, hmac } = deriveKeys(key, name);
  const ciphertext = Buffer.from(data.ciphertext, "base64");
  const expected = createHmac("sha256", hmac).update(ciphertext).digest();
  const mac = Buffer.from(data.mac, "base64");
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
    throw new Error(`secret ${name} does not open with this key (MAC mismatch)`);
  }
  return ctr(aes, Buffer.from(data.iv, "base64"), ciphertext).toString("utf8");
}

/** The check a key description carries: 32 zero bytes encrypted under the empty name. */
export function keyCheck(key: Uint8Array, iv?: Uint8Array): { iv: string; mac: string } {
  const { iv: usedIv, mac } = encryptSecret("\0".repeat(32), key, "", iv);
  return { iv: usedIv, mac };
}

/** Whether `key` is the key a description's check was made with; a description without one accepts any key (spec). */
export function keyMatches(
  key: Uint8Array,
  description: { iv?: string | undefined; mac?: string | undefined },
): boolean {
  if (!description.iv || !description.mac) return true;
  const { mac } = keyCheck(key, Buffer.from(description.iv, "base64"));
  const want = Buffer.from(description.mac, "base64");
  const got = Buffer.from(mac, "base64");
  return want.length === got.length && timingSafeEqual(want, got);
}
