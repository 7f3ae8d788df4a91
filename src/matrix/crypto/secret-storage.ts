import { randomBytes } from "node:crypto";
import { z } from "zod";
import { RoomgateError } from "../../core/errors.js";
import { refusalOf } from "../matrix-retry.js";
import type { HomeserverCall } from "./outgoing-requests.js";
import {
  AES_HMAC_SHA2,
  decryptSecret,
  EncryptedSecretSchema,
  encryptSecret,
  keyCheck,
  keyMatches,
} from "./secret-storage-cipher.js";

/** The secrets the bot keeps in secret storage: its private cross-signing keys and the key-backup key. */
export type SecretName =
  | "m.cross_signing.master"
  | "m.cross_signing.self_signing"
  | "m.cross_signing.user_signing"
  | "m.megolm_backup.v1";

const DefaultKeySchema = z.looseObject({ key: z.string() });
const KeyDescriptionSchema = z.looseObject({
  algorithm: z.string(),
  iv: z.string().optional(),
  mac: z.string().optional(),
});
const SecretSchema = z.looseObject({ encrypted: z.record(z.string(), z.unknown()) });

/** MATRIX_RECOVERY_KEY does not open the account's secret storage (another key was set up there). */
export class WrongRecoveryKeyError extends RoomgateError {
  constructor(readonly userId: string) {
    super(
      `matrix: matrix.recoveryKey (MATRIX_RECOVERY_KEY) does not open the secret storage of ${userId}: ` +
        "it was set up with another key. Set the key it was set up with, or make a new one with " +
        "`roomgate matrix setup --reset` (the account's cross-signing identity is then replaced).",
    );
  }
}

/** The account's global account data: a value by type, or null where there is none. */
export class AccountData {
  constructor(
    private readonly call: HomeserverCall,
    private readonly userId: string,
  ) {}

  private path(type: string): string {
    return `/_matrix/client/v3/user/${encodeURIComponent(this.userId)}/account_data/${encodeURIComponent(type)}`;
  }

  /** The content of `type`, or null (404, or emptied: `{}`). */
  async get(type: string): Promise<Record<string, unknown> | null> {
    try {
      const content = z
        .record(z.string(), z.unknown())
        .parse(await this.call("GET", this.path(type), undefined));
      return Object.keys(content).length === 0 ? null : content;
    } catch (err) {
      if (refusalOf(err).status === 404) return null;
      throw err;
    }
  }

  async put(type: string, content: Record<string, unknown>): Promise<void> {
    await this.call("PUT", this.path(type), content);
  }
}

/**
 * The account's secret storage (the spec's "Secrets" module) under the operator's
 * recovery key: the default key's description lives in account data
 * (`m.secret_storage.default_key`, `m.secret_storage.key.<id>`) with a check value, and
 * each secret is account data of its own name, encrypted for that key id. Element reads
 * the same storage with the same recovery key. A storage set up with another key is
 * refused (WrongRecoveryKeyError), never overwritten.
 */
export class SecretStorage {
  private keyId: string | undefined;

  constructor(
    private readonly data: AccountData,
    private readonly key: Uint8Array,
    private readonly userId: string,
  ) {}

  /** The id of the default key, checked against the recovery key; null when the account has no secret storage. */
  async defaultKey(): Promise<string | null> {
    if (this.keyId) return this.keyId;
    const pointer = DefaultKeySchema.safeParse(await this.data.get("m.secret_storage.default_key"));
    if (!pointer.success) return null;
    const description = KeyDescriptionSchema.safeParse(
      await this.data.get(`m.secret_storage.key.${pointer.data.key}`),
    );
    if (!description.success) return null;
    if (description.data.algorithm !== AES_HMAC_SHA2 || !keyMatches(this.key, description.data)) {
      throw new WrongRecoveryKeyError(this.userId);
    }
    this.keyId = pointer.data.key;
    return this.keyId;
  }

  /** Sets the recovery key up as the account's default secret-storage key (a new key id), replacing any other. */
  async create(): Promise<string> {
    const keyId = randomBytes(24).toString("base64url");
    await this.data.put(`m.secret_storage.key.${keyId}`, {
      name: "roomgate recovery key",
      algorithm: AES_HMAC_SHA2,
      ...keyCheck(this.key),
    });
    await this.data.put("m.secret_storage.default_key", { key: keyId });
    this.keyId = keyId;
    return keyId;
  }

  /** The default key's id, setting the storage up when the account has none. */
  async ensure(): Promise<string> {
    return (await this.defaultKey()) ?? (await this.create());
  }

  /** A secret, decrypted; null when it is not stored for the default key. Throws when it does not decrypt. */
  async get(name: SecretName): Promise<string | null> {
    const keyId = await this.defaultKey();
    if (!keyId) return null;
    const secret = SecretSchema.safeParse(await this.data.get(name));
    if (!secret.success) return null;
    const encrypted = EncryptedSecretSchema.safeParse(secret.data.encrypted[keyId]);
    if (!encrypted.success) return null;
    return decryptSecret(encrypted.data, this.key, name);
  }

  /** Stores a secret for the default key (setting the storage up when needed). */
  async put(name: SecretName, value: string): Promise<void> {
    const keyId = await this.ensure();
    await this.data.put(name, { encrypted: { [keyId]: encryptSecret(value, this.key, name) } });
  }
}
