import type { RedisClient } from "../../sessions/redis-connection.js";
import { z } from "zod";
import type { Keys } from "../../sessions/keys.js";
import { DeviceLeaseLostError, UnreadableCryptoStoreError } from "./crypto-errors.js";
import type { DeviceScripts } from "./device-scripts.js";
import { StoreCipher } from "./store-cipher.js";

/** What is kept in the clear beside the encrypted store: whose it is, and how to open it. */
export const StoreMetaSchema = z.object({
  version: z.literal(1),
  userId: z.string(),
  deviceId: z.string(),
  /** The device's identity keys, so an operator can compare them and a reload can check them. */
  curve25519: z.string(),
  ed25519: z.string(),
  /** The scrypt salt of the store's key (base64). */
  salt: z.string(),
  /** Redis-independent counter of saves, for the log. */
  generation: z.number().int().nonnegative(),
  savedAt: z.number(),
});
export type StoreMeta = z.infer<typeof StoreMetaSchema>;

const META = "meta";
const BLOB = "blob";
const SYNC = "sync";

/** A loaded store: its metadata, the decrypted snapshot and the device's sync token. */
export interface LoadedStore {
  meta: StoreMeta;
  snapshot: Buffer;
  syncToken: string | null;
}

/**
 * The bot device's crypto store in Redis: one hash holding the IndexedDB snapshot
 * sealed with MATRIX_STORE_KEY, its metadata and the device's sync token. Every write
 * is fenced by the device lease (src/matrix/lua/write-device.lua), so only the owner
 * can write, and a process that lost the lease finds out at its next write.
 */
export class CryptoStore {
  private cipher: StoreCipher | undefined;
  private readonly storeKey: string;
  private readonly leaseKey: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: DeviceScripts,
    keys: Keys,
    readonly userId: string,
    readonly deviceId: string,
    storeKey: string,
  ) {
    this.key = keys.matrixDevice(userId, deviceId, "store");
    this.leaseKey = keys.matrixDevice(userId, deviceId, "lease");
    this.storeKey = storeKey;
  }

  /** The hash holding the store. */
  readonly key: string;

  private get aad(): string {
    return `roomgate-matrix-crypto-store/v1\n${this.userId}\n${this.deviceId}`;
  }

  /** Reads and decrypts the store; null when there is none. Throws UnreadableCryptoStoreError. */
  async load(): Promise<LoadedStore | null> {
    const [meta, blob, sync] = await this.redis.hmgetBuffer(this.key, META, BLOB, SYNC);
    if (!meta || !blob) return null;
    const unreadable = (cause: unknown) =>
      new UnreadableCryptoStoreError(this.userId, this.deviceId, { cause });
    let parsed: StoreMeta;
    try {
      parsed = StoreMetaSchema.parse(JSON.parse(meta.toString("utf8")));
    } catch (err) {
      throw unreadable(err);
    }
    const cipher = await StoreCipher.derive(this.storeKey, Buffer.from(parsed.salt, "base64"));
    let snapshot: Buffer;
    try {
      snapshot = cipher.open(blob, this.aad);
    } catch (err) {
      throw unreadable(err);
    }
    this.cipher = cipher;
    return { meta: parsed, snapshot, syncToken: sync ? sync.toString("utf8") : null };
  }

  /** Whether a store exists at all (without opening it). */
  async exists(): Promise<boolean> {
    return (await this.redis.hexists(this.key, META)) === 1;
  }

  /** Seals and writes a snapshot with its metadata; throws DeviceLeaseLostError when fenced out. */
  async save(token: string, meta: Omit<StoreMeta, "salt" | "version">, snapshot: Buffer): Promise<void> {
    this.cipher ??= await StoreCipher.derive(this.storeKey);
    const full: StoreMeta = { ...meta, version: 1, salt: this.cipher.salt.toString("base64") };
    const sealed = this.cipher.seal(snapshot, this.aad);
    await this.write(token, "crypto store save", [META, JSON.stringify(full), BLOB, sealed]);
  }

  /** Records the device's sync token; fenced like the store, since to-device messages go with it. */
  async saveSyncToken(token: string, syncToken: string): Promise<void> {
    await this.write(token, "sync token save", [SYNC, syncToken]);
  }

  /** The device's sync token, without opening the store. */
  async syncToken(): Promise<string | null> {
    return this.redis.hget(this.key, SYNC);
  }

  private async write(token: string, what: string, fields: (string | Buffer)[]): Promise<void> {
    const written = await this.scripts.run("rgMxWriteDevice", this.leaseKey, this.key, token, ...fields);
    if (!written) throw new DeviceLeaseLostError(what);
  }
}
