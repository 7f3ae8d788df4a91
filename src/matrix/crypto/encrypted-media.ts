import { Attachment, EncryptedAttachment } from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";
import { EncryptedFileSchema, type EncryptedFile } from "../matrix-events.js";
import { loadCrypto } from "./wasm-crypto.js";

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
