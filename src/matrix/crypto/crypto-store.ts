import { createHash } from "node:crypto";
import type { RedisClient } from "../../sessions/redis-connection.js";
import { z } from "zod";
import type { Keys } from "../../sessions/keys.js";
import { DeviceLeaseLostError, UnreadableCryptoStoreError } from "./crypto-errors.js";
import type { DeviceScripts } from "./device-scripts.js";
import type { Snapshot } from "./idb-snapshot.js";
import { StoreCipher } from "./store-cipher.js";

/** What is kept in the clear beside the encrypted store: whose it is, and how to open it. */
export const StoreMetaSchema = z.object({
  /** 3: every field bound to the version it was written at (see FieldIndexSchema); 2: to its name only. */
  version: z.union([z.literal(2), z.literal(3)]),
  userId: z.string(),
  deviceId: z.string(),
  /** The device's identity keys, so an operator can compare them and a reload can check them. */
  curve25519: z.string(),
  ed25519: z.string(),
  /** The scrypt salt of the store's key (base64). */
  salt: z.string(),
  /** A counter of saves: the version each save gives the fields it writes. */
  generation: z.number().int().nonnegative(),
  savedAt: z.number(),
});
export type StoreMeta = z.infer<typeof StoreMetaSchema>;

const META = "meta";
const SCHEMA = "schema";
const PART = "part:";
const SYNC = "sync";
const INDEX = "index";

/**
 * The sealed index of a v3 store: the generation of the save that wrote it and, for
 * every sealed field, the generation it was last written at. Each field is sealed bound
 * to that version, and the index to the generation in the clear metadata, so a field
 * swapped for an older sealed copy of itself no longer opens.
 */
const FieldIndexSchema = z.object({
  generation: z.number().int().nonnegative(),
  fields: z.record(z.string(), z.number().int().nonnegative()),
});

/** A loaded store: its metadata, the decrypted snapshot and the device's sync token. */
export interface LoadedStore {
  meta: StoreMeta;
  snapshot: Snapshot;
  syncToken: string | null;
  /** Written in an older format: the next save writes every field again, bound to its version. */
  legacy: boolean;
}

const digest = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("base64");

/**
 * The bot device's crypto store in Redis: one hash holding the machine's IndexedDB
 * schema and each of its object stores as a field, every one sealed with
 * MATRIX_STORE_KEY, their metadata and the device's sync token. A save writes only the
 * fields whose content changed since the last save (encrypting a message changes the
 * outbound session, not the thousands of room keys received). Every write is fenced
 * by the device lease (src/matrix/lua/write-device.lua), so only the owner can write,
 * and a process that lost the lease finds out at its next write.
 */
export class CryptoStore {
  /** The hash holding the store. */
  readonly key: string;
  private readonly leaseKey: string;
  private cipher: StoreCipher | undefined;
  /** What each field held at the last load or save (sha256 of the plain bytes) and its version. */
  private readonly written = new Map<string, { digest: string; version: number }>();
  /** The highest generation this process loaded or saved: an older whole store is refused too. */
  private newest = -1;

  constructor(
    private readonly redis: RedisClient,
    private readonly scripts: DeviceScripts,
    keys: Keys,
    readonly userId: string,
    readonly deviceId: string,
    private readonly storeKey: string,
  ) {
    this.key = keys.matrixDevice(userId, deviceId, "store");
    this.leaseKey = keys.matrixDevice(userId, deviceId, "lease");
  }

  /**
   * Binds each sealed field to this device, its own name and (v3) the generation it was
   * written at, so no field can be swapped for another one or for an older copy of itself.
   */
  private aad(field: string, version?: number): string {
    const base = `${this.userId}\n${this.deviceId}\n${field}`;
    return version === undefined
      ? `roomgate-matrix-crypto-store/v2\n${base}`
      : `roomgate-matrix-crypto-store/v3\n${base}\n${version}`;
  }

  /** Reads and decrypts the store; null when there is none. Throws UnreadableCryptoStoreError. */
  async load(): Promise<LoadedStore | null> {
    const fields = await this.redis.hgetallBuffer(this.key);
    const meta = fields[META];
    const schema = fields[SCHEMA];
    if (!meta || !schema) return null;
    const unreadable = (cause: unknown) =>
      new UnreadableCryptoStoreError(this.userId, this.deviceId, { cause });
    let parsed: StoreMeta;
    try {
      parsed = StoreMetaSchema.parse(JSON.parse(meta.toString("utf8")));
    } catch (err) {
      throw unreadable(err);
    }
    const salt = Buffer.from(parsed.salt, "base64");
    // A standby derived it already (verify): the takeover skips the scrypt.
    const cipher = this.cipher?.salt.equals(salt)
      ? this.cipher
      : await StoreCipher.derive(this.storeKey, salt);
    const snapshot: Snapshot = { schema: Buffer.alloc(0), parts: new Map() };
    this.written.clear();
    try {
      if (parsed.generation < this.newest) {
        throw new Error(
          `the store is older (generation ${parsed.generation}) than one seen before (${this.newest})`,
        );
      }
      const versions =
        parsed.version === 3 ? this.openIndex(cipher, fields[INDEX], parsed.generation) : undefined;
      const open = (field: string, sealed: Buffer | undefined): Buffer => {
        if (!sealed) throw new Error(`the store has no field ${field}`);
        const version = versions?.[field];
        if (versions && version === undefined) throw new Error(`the store's index does not list ${field}`);
        const plain = cipher.open(sealed, this.aad(field, version));
        // A legacy store's fields get no version: the next save writes each of them again.
        if (version !== undefined) this.written.set(field, { digest: digest(plain), version });
        return plain;
      };
      snapshot.schema = open(SCHEMA, schema);
      for (const [field, sealed] of Object.entries(fields)) {
        if (field.startsWith(PART)) snapshot.parts.set(field.slice(PART.length), open(field, sealed));
      }
      // A field the index lists and the hash lacks was deleted (an older store): refused too.
      for (const field of Object.keys(versions ?? {})) if (!fields[field]) open(field, undefined);
    } catch (err) {
      this.written.clear();
      throw unreadable(err);
    }
    this.cipher = cipher;
    this.newest = parsed.generation;
    const sync = fields[SYNC];
    return {
      meta: parsed,
      snapshot,
      syncToken: sync ? sync.toString("utf8") : null,
      legacy: parsed.version !== 3,
    };
  }

  private openIndex(
    cipher: StoreCipher,
    sealed: Buffer | undefined,
    generation: number,
  ): Record<string, number> {
    if (!sealed) throw new Error("the store has no index");
    const index = FieldIndexSchema.parse(
      JSON.parse(cipher.open(sealed, this.aad(INDEX, generation)).toString("utf8")),
    );
    if (index.generation !== generation) throw new Error("the store's index is not its metadata's");
    return index.fields;
  }

  /**
   * Checks that the store (when there is one) opens with this process's key, keeping
   * only the derived key: a standby finds a wrong MATRIX_STORE_KEY at start, not at
   * takeover, and its takeover's load skips the key derivation.
   * Throws UnreadableCryptoStoreError.
   */
  async verify(): Promise<void> {
    const [meta, index, schema] = await this.redis.hmgetBuffer(this.key, META, INDEX, SCHEMA);
    if (!meta || !schema) return;
    try {
      const parsed = StoreMetaSchema.parse(JSON.parse(meta.toString("utf8")));
      const cipher = await StoreCipher.derive(this.storeKey, Buffer.from(parsed.salt, "base64"));
      if (parsed.version === 3) this.openIndex(cipher, index ?? undefined, parsed.generation);
      else cipher.open(schema, this.aad(SCHEMA));
      this.cipher = cipher;
    } catch (err) {
      throw new UnreadableCryptoStoreError(this.userId, this.deviceId, { cause: err });
    }
  }

  /**
   * Seals and writes what changed in the snapshot, with the metadata and the index, in
   * one fenced step; returns the bytes written. Each field written is bound to the
   * save's generation. Throws DeviceLeaseLostError when fenced out.
   */
  async save(token: string, meta: Omit<StoreMeta, "salt" | "version">, snapshot: Snapshot): Promise<number> {
    this.cipher ??= await StoreCipher.derive(this.storeKey);
    const generation = meta.generation;
    const full: StoreMeta = { ...meta, version: 3, salt: this.cipher.salt.toString("base64") };
    const now = new Map<string, Buffer>([[SCHEMA, snapshot.schema]]);
    for (const [name, bytes] of snapshot.parts) now.set(PART + name, bytes);
    const pairs: [string, string | Buffer][] = [[META, JSON.stringify(full)]];
    const kept = new Map<string, { digest: string; version: number }>();
    let bytes = 0;
    for (const [field, plain] of now) {
      const d = digest(plain);
      const before = this.written.get(field);
      if (before?.digest === d) {
        kept.set(field, before);
        continue;
      }
      kept.set(field, { digest: d, version: generation });
      const sealed = this.cipher.seal(plain, this.aad(field, generation));
      pairs.push([field, sealed]);
      bytes += sealed.length;
    }
    const index = { generation, fields: Object.fromEntries([...kept].map(([f, w]) => [f, w.version])) };
    pairs.push([INDEX, this.cipher.seal(Buffer.from(JSON.stringify(index)), this.aad(INDEX, generation))]);
    const gone = [...this.written.keys()].filter((field) => !now.has(field));
    const incremental = this.written.size > 0;
    const whole = await this.write(token, "crypto store save", gone, pairs);
    this.written.clear();
    if (incremental && !whole) {
      // The store vanished under its owner (deleted, or Redis lost it): write all of it again.
      return bytes + (await this.save(token, meta, snapshot));
    }
    for (const [field, w] of kept) this.written.set(field, w);
    this.newest = Math.max(this.newest, generation);
    return bytes;
  }

  /** Records the device's sync token; fenced like the store, since to-device messages go with it. */
  async saveSyncToken(token: string, syncToken: string): Promise<void> {
    await this.write(token, "sync token save", [], [[SYNC, syncToken]]);
  }

  /** The device's sync token, without opening the store. */
  async syncToken(): Promise<string | null> {
    return this.redis.hget(this.key, SYNC);
  }

  /** Writes fields and removes others, fenced by the device lease; false when the store had no metadata before. */
  private async write(
    token: string,
    what: string,
    remove: string[],
    fields: [string, string | Buffer][],
  ): Promise<boolean> {
    const result = await this.scripts.write({ lease: this.leaseKey, store: this.key }, token, remove, fields);
    if (result === "lost") throw new DeviceLeaseLostError(what);
    return result === "written";
  }
}
