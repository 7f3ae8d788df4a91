import { Attachment, EncryptedAttachment } from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";
import { loadCrypto } from "./crypto-device.js";

/** The `file` object of an encrypted attachment (spec: EncryptedFile), as far as it is read. */
export const EncryptedFileSchema = z.looseObject({
  url: z.string(),
  key: z.looseObject({ k: z.string() }),
  iv: z.string(),
  hashes: z.looseObject({ sha256: z.string() }),
  v: z.string().optional(),
});
export type EncryptedFile = z.infer<typeof EncryptedFileSchema>;

/**
 * Encrypts a file for an encrypted room (AES-CTR with a fresh key, SHA-256 of the
 * ciphertext, as the spec's attachment encryption says): the bytes to upload and the
 * `file` object without its `url`.
 */
export async function encryptAttachment(
  plain: Uint8Array,
): Promise<{ data: Buffer; file: Omit<EncryptedFile, "url"> }> {
  await loadCrypto();
  const encrypted = Attachment.encrypt(plain);
  const info = z.record(z.string(), z.unknown()).parse(JSON.parse(encrypted.mediaEncryptionInfo ?? "null"));
  const file = EncryptedFileSchema.omit({ url: true }).parse(info);
  return { data: Buffer.from(encrypted.encryptedData), file };
}

/** Decrypts a downloaded encrypted attachment; throws when its hash or key do not match. */
export async function decryptAttachment(data: Uint8Array, file: EncryptedFile): Promise<Uint8Array> {
  await loadCrypto();
  const attachment = new EncryptedAttachment(data, JSON.stringify(file));
  return Attachment.decrypt(attachment);
}
