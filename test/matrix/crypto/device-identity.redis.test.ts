import { createPrivateKey, createPublicKey } from "node:crypto";
import decryptAESSecretStorageItem from "matrix-js-sdk/lib/utils/decryptAESSecretStorageItem.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MatrixConfig } from "../../../src/core/config.js";
import { silentLogger } from "../../../src/core/log.js";
import { encodeRecoveryKey, newRecoveryKey } from "../../../src/matrix/crypto/recovery-key.js";
import { MatrixReceiver } from "../../../src/matrix/matrix-receiver.js";
import { E2eePeer } from "../../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin } from "../../support/matrix-homeserver-standin.js";
import { matrixConfig, RecordingInbox } from "../../support/matrix-fixtures.js";
import { publicKeyOf, signedBy, type Signed } from "../../support/matrix-standin-signing.js";
import { testRedis, type TestRedis } from "../../support/redis.js";

const STORE_KEY = "a store key for the tests, long enough";

/** The published keys of a user, as anyone sees them (`/keys/query`). */
async function published(hs: MatrixHomeserverStandin, token: string, userId: string) {
  const res = await fetch(`${hs.url}/_matrix/client/v3/keys/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ device_keys: { [userId]: [] } }),
  });
  const body = (await res.json()) as {
    device_keys: Record<string, Record<string, Signed>>;
    master_keys: Record<string, Signed>;
    self_signing_keys: Record<string, Signed>;
  };
  return {
    devices: body.device_keys[userId] ?? {},
    master: body.master_keys[userId],
    selfSigning: body.self_signing_keys[userId],
  };
}

/** The device ← self-signing key ← master key chain, checked here with ed25519 (not by asking the bot). */
function chainHolds(
  keys: Awaited<ReturnType<typeof published>>,
  userId: string,
  deviceId: string,
): { master: string } {
  const master = keys.master;
  const selfSigning = keys.selfSigning;
  const device = keys.devices[deviceId];
  expect(master && selfSigning && device).toBeTruthy();
  const masterKey = publicKeyOf(master!);
  const selfKey = publicKeyOf(selfSigning!);
  expect(signedBy(selfSigning!, userId, masterKey, masterKey)).toBe(true);
  expect(signedBy(device!, userId, selfKey, selfKey)).toBe(true);
  return { master: masterKey };
}

/** The ed25519 public key (unpadded base64) of a private key seed given as base64. */
function publicOfSeed(seed: string): string {
  const der = Buffer.concat([
    Buffer.from("302e020100300506032b657004220420", "hex"),
    Buffer.from(seed, "base64"),
  ]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({
    format: "jwk",
  });
  return Buffer.from(String(jwk.x), "base64url").toString("base64").replace(/=+$/, "");
}

/**
 * The bot's device as Element needs it (issue 23), on the homeserver stand-in: its own
 * cross-signing identity made at the first encrypted start and kept in secret storage
 * under the recovery key, every later device signed with it, and room keys in the key
 * backup for the next device.
 */
describe("the bot's cross-signed device, its recovery key and key backup", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string; password: string };
  let aliceId: string;
  let room: string;
  const recoveryBytes = newRecoveryKey();
  const recoveryKey = encodeRecoveryKey(recoveryBytes);
  const running: MatrixReceiver[] = [];

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot", "BOTDEV1");
    aliceId = hs.registerUser("alice").userId;
    room = hs.createRoom(aliceId, { members: [bot.userId], encrypted: true });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await hs.close();
    await redis.cleanup();
  });

  async function start(extra: Partial<MatrixConfig> = {}, token = bot.accessToken) {
    const inbox = new RecordingInbox();
    const config: MatrixConfig = {
      ...matrixConfig(hs.url, token, [{ room, users: [aliceId] }]),
      storeKey: STORE_KEY,
      recoveryKey,
      ...extra,
    };
    const receiver = new MatrixReceiver({
      config,
      maxFileBytes: 1000,
      redis: redis.redis,
      keys: redis.keys,
      inbox,
      log: process.env.DEBUG_LOG
        ? (await import("../../../src/core/log.js")).createLogger({ level: "debug" })
        : silentLogger(),
      syncTimeoutMs: 200,
    });
    running.push(receiver);
    await receiver.start();
    return { inbox, receiver };
  }
  const botUploads = () => hs.keys.signing.uploads.filter((u) => u.userId === bot.userId);
  const stopAll = async () => {
    for (const r of running.splice(0)) await r.stop();
  };
  const accountData = async (type: string) => {
    const res = await fetch(
      `${hs.url}/_matrix/client/v3/user/${encodeURIComponent(bot.userId)}/account_data/${type}`,
      { headers: { authorization: `Bearer ${bot.accessToken}` } },
    );
    return res.ok ? ((await res.json()) as Record<string, unknown>) : null;
  };
  /** A secret the bot stored, decrypted by matrix-js-sdk (Element's code) with the recovery key. */
  const secret = async (name: string) => {
    const pointer = (await accountData("m.secret_storage.default_key")) as { key: string };
    const stored = (await accountData(name)) as {
      encrypted: Record<string, { iv: string; ciphertext: string; mac: string }>;
    };
    return decryptAESSecretStorageItem(stored.encrypted[pointer.key]!, new Uint8Array(recoveryBytes), name);
  };

  it("makes its identity at the first start with the token alone, signs its device and keeps the keys under the recovery key", async () => {
    await start();
    expect(hs.keys.signing.uploads).toEqual([{ userId: bot.userId, auth: false }]);
    const keys = await published(hs, bot.accessToken, bot.userId);
    const { master } = chainHolds(keys, bot.userId, "BOTDEV1");
    // The master key also carries the device's own signature (what Element's bootstrap uploads).
    const deviceKey = (keys.devices.BOTDEV1?.keys as Record<string, string>)["ed25519:BOTDEV1"]!;
    expect(signedBy(keys.master!, bot.userId, "BOTDEV1", deviceKey)).toBe(true);
    // Element reads the private keys back with the recovery key: they are the published ones.
    expect(publicOfSeed(await secret("m.cross_signing.master"))).toBe(master);
    expect(publicOfSeed(await secret("m.cross_signing.self_signing"))).toBe(publicKeyOf(keys.selfSigning!));
    // The key backup is signed by the device and by the master key, and its key is stored too.
    const backup = hs.keys.backup.current(bot.userId);
    expect(backup).toBeDefined();
    const auth = backup!.auth_data as Signed;
    expect(signedBy(auth, bot.userId, "BOTDEV1", deviceKey)).toBe(true);
    expect(signedBy(auth, bot.userId, master, master)).toBe(true);
    expect(await secret("m.megolm_backup.v1")).toMatch(/^[A-Za-z0-9+/]{43}=?$/);
  });

  it("keeps the same identity across a restart with its store, uploading nothing again", async () => {
    await start();
    const before = await published(hs, bot.accessToken, bot.userId);
    await stopAll();
    await start();
    expect(botUploads()).toHaveLength(1);
    expect(await published(hs, bot.accessToken, bot.userId)).toEqual(before);
  });

  it("after a lost store, a new device restores the identity and the backed-up room keys, and reads a question sent before", async () => {
    const first = await start();
    const alice = await E2eePeer.login(hs, aliceId, "ALICE1", { strict: true });
    const q1 = await alice.sendText(room, "question one");
    await expect
      .poll(() => first.inbox.events.map((e) => e.eventId), { timeout: 10_000 })
      .toContain(`mx:${q1.event_id}`);
    await expect
      .poll(() => hs.keys.backup.current(bot.userId)?.sessions ?? 0, { timeout: 10_000 })
      .toBeGreaterThan(0);
    const { master } = chainHolds(await published(hs, bot.accessToken, bot.userId), bot.userId, "BOTDEV1");
    await stopAll();
    // Asked while the bot is down, in the session whose key is in the backup.
    const q2 = await alice.sendText(room, "question two, while the store is lost");
    await redis.redis.del(redis.keys.matrixDevice(bot.userId, "BOTDEV1", "store"));
    const relogin = hs.login(bot.userId, "BOTDEV2");
    const second = await start({}, relogin.accessToken);
    const after = await published(hs, relogin.accessToken, bot.userId);
    expect(chainHolds(after, bot.userId, "BOTDEV2").master).toBe(master);
    expect(botUploads()).toHaveLength(1);
    await expect
      .poll(() => second.inbox.events.map((e) => e.eventId), { timeout: 10_000 })
      .toContain(`mx:${q2.event_id}`);
    const answered = second.inbox.events.find((e) => e.eventId === `mx:${q2.event_id}`);
    expect(answered?.kind === "message" ? answered.text : undefined).toBe(
      "question two, while the store is lost",
    );
  });

  it("without the recovery key, a new device stays unsigned rather than replacing the identity", async () => {
    await start();
    const keys = await published(hs, bot.accessToken, bot.userId);
    await stopAll();
    await redis.redis.del(redis.keys.matrixDevice(bot.userId, "BOTDEV1", "store"));
    const relogin = hs.login(bot.userId, "BOTDEV2");
    await start({ recoveryKey: undefined }, relogin.accessToken);
    const after = await published(hs, relogin.accessToken, bot.userId);
    expect(after.master).toEqual(keys.master);
    expect(
      signedBy(
        after.devices.BOTDEV2!,
        bot.userId,
        publicKeyOf(after.selfSigning!),
        publicKeyOf(after.selfSigning!),
      ),
    ).toBe(false);
    expect(hs.keys.signing.uploads).toHaveLength(1);
  });

  it("refuses a recovery key that does not open the account's secret storage", async () => {
    await start();
    await stopAll();
    await expect(start({ recoveryKey: encodeRecoveryKey(newRecoveryKey()) })).rejects.toThrow(
      "does not open the secret storage",
    );
  });
});
