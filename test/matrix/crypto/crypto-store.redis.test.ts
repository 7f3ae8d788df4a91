import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UnreadableCryptoStoreError } from "../../../src/matrix/crypto/crypto-errors.js";
import { CryptoStore } from "../../../src/matrix/crypto/crypto-store.js";
import { DeviceScripts } from "../../../src/matrix/crypto/device-scripts.js";
import type { Snapshot } from "../../../src/matrix/crypto/idb-snapshot.js";
import { testRedis, type TestRedis } from "../../support/redis.js";

const STORE_KEY = "a store key long enough for the test";
const USER = "@bot:example.org";
const DEVICE = "BOTDEVICE";
const TOKEN = "lease-token";

const snapshot = (sessions: string): Snapshot => ({
  schema: Buffer.from("schema v1"),
  parts: new Map([
    ["crypto/sessions", Buffer.from(sessions)],
    ["crypto/account", Buffer.from("account keys")],
  ]),
});
const meta = (generation: number) => ({
  userId: USER,
  deviceId: DEVICE,
  curve25519: "curve",
  ed25519: "ed",
  generation,
  savedAt: Date.now(),
});

/**
 * The crypto store's sealed fields in Redis: each is bound to its device, its name and
 * the save that wrote it, so someone who can write Redis (but lacks MATRIX_STORE_KEY)
 * cannot swap a field for an older sealed copy of itself, e.g. to make the bot reuse an
 * outbound Megolm session's old message index or forget a rotated key.
 */
describe("CryptoStore: sealed fields bound to their key and version", () => {
  let redis: TestRedis;
  let key: string;

  beforeEach(async () => {
    redis = await testRedis();
    key = redis.keys.matrixDevice(USER, DEVICE, "store");
    await redis.redis.set(redis.keys.matrixDevice(USER, DEVICE, "lease"), TOKEN, "PX", 60_000);
  });
  afterEach(async () => {
    await redis.cleanup();
  });

  const store = () =>
    new CryptoStore(redis.redis, new DeviceScripts(redis.redis), redis.keys, USER, DEVICE, STORE_KEY);

  it("reopens what it saved, and rewrites only the fields that changed", async () => {
    const writer = store();
    await writer.save(TOKEN, meta(1), snapshot("session at index 0"));
    const first = await redis.redis.hgetBuffer(key, "part:crypto/account");
    await writer.save(TOKEN, meta(2), snapshot("session at index 1"));
    expect(await redis.redis.hgetBuffer(key, "part:crypto/account")).toEqual(first);
    const loaded = await store().load();
    expect(loaded?.snapshot.parts.get("crypto/sessions")?.toString()).toBe("session at index 1");
    expect(loaded?.legacy).toBe(false);
  });

  it("refuses a field swapped for an older sealed copy of itself", async () => {
    const writer = store();
    await writer.save(TOKEN, meta(1), snapshot("session at index 0"));
    const old = await redis.redis.hgetBuffer(key, "part:crypto/sessions");
    await writer.save(TOKEN, meta(2), snapshot("session at index 1"));
    await redis.redis.hset(key, "part:crypto/sessions", old!);
    await expect(store().load()).rejects.toBeInstanceOf(UnreadableCryptoStoreError);
  });

  it("refuses the older index and metadata swapped in with the older field", async () => {
    const writer = store();
    await writer.save(TOKEN, meta(1), snapshot("session at index 0"));
    const old = await redis.redis.hgetallBuffer(key);
    await writer.save(TOKEN, meta(2), snapshot("session at index 1"));
    await writer.save(TOKEN, meta(3), snapshot("session at index 2"));
    // Only the index and the clear metadata go back: the schema was rewritten at generation 1
    // and the account never changed, but the session field is the newer one.
    await redis.redis.hset(key, "meta", old.meta!, "index", old.index!);
    await expect(store().load()).rejects.toThrow("cannot be decrypted");
    // The whole older store, consistent in itself, is refused by a process that saw a newer one.
    await redis.redis.del(key);
    await redis.redis.hset(key, old);
    await expect(writer.load()).rejects.toBeInstanceOf(UnreadableCryptoStoreError);
  });

  it("refuses a field moved under another name, and one deleted from the hash", async () => {
    const writer = store();
    await writer.save(TOKEN, meta(1), snapshot("session"));
    const account = await redis.redis.hgetBuffer(key, "part:crypto/account");
    await redis.redis.hset(key, "part:crypto/sessions", account!);
    await expect(store().load()).rejects.toBeInstanceOf(UnreadableCryptoStoreError);
    await writer.save(TOKEN, meta(2), snapshot("session again"));
    await redis.redis.hdel(key, "part:crypto/account");
    await expect(store().load()).rejects.toBeInstanceOf(UnreadableCryptoStoreError);
  });
});
