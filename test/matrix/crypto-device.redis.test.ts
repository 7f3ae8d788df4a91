import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import {
  DeviceLeaseLostError,
  LostCryptoStoreError,
  UnreadableCryptoStoreError,
  UndecryptableEventError,
} from "../../src/matrix/crypto/crypto-errors.js";
import { CryptoDevice, type ArrivedRoomKey } from "../../src/matrix/crypto/crypto-device.js";
import { CryptoStore } from "../../src/matrix/crypto/crypto-store.js";
import { DeviceScripts } from "../../src/matrix/crypto/device-scripts.js";
import { roomCryptoSettings } from "../../src/matrix/crypto/room-settings.js";
import { E2eePeer } from "../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { testRedis, type TestRedis } from "../support/redis.js";

const STORE_KEY = "correct horse battery staple, twice";
const MEGOLM = { algorithm: "m.megolm.v1.aes-sha2" };

describe("CryptoDevice: the bot's device on the real wasm OlmMachine, its store in Redis", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string; deviceId: string };
  let alice: string;
  let roomId: string;
  const opened: CryptoDevice[] = [];
  let since = "";

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot", "BOTDEVICE");
    alice = hs.registerUser("alice", "ALICE1").userId;
    roomId = hs.createRoom(alice, { members: [bot.userId], encrypted: true });
    since = "";
  });
  afterEach(async () => {
    for (const d of opened.splice(0)) await d.close().catch(() => undefined);
    await hs.close();
    await redis.cleanup();
  });

  const call = (token: string) => async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${hs.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (!res.ok)
      throw Object.assign(new Error(`HTTP ${res.status} ${JSON.stringify(json)}`), {
        statusCode: res.status,
      });
    return json;
  };

  const leaseKey = () => redis.keys.matrixDevice(bot.userId, bot.deviceId, "lease");

  async function open(options: { storeKey?: string; token?: string } = {}): Promise<CryptoDevice> {
    const scripts = new DeviceScripts(redis.redis);
    const token = options.token ?? "lease-token-1";
    await redis.redis.set(leaseKey(), token, "PX", 60_000);
    const store = new CryptoStore(
      redis.redis,
      scripts,
      redis.keys,
      bot.userId,
      bot.deviceId,
      options.storeKey ?? STORE_KEY,
    );
    const device = await CryptoDevice.open({
      userId: bot.userId,
      deviceId: bot.deviceId,
      store,
      leaseToken: () => token,
      call: call(bot.accessToken),
      log: silentLogger(),
      // The device's own mechanics; whom it trusts is tested with cross-signing (test/matrix/crypto/).
      trust: "all",
    });
    opened.push(device);
    return device;
  }

  /** One sync of the bot's device, fed to its machine. */
  async function botSync(device: CryptoDevice): Promise<void> {
    const query = new URLSearchParams({ timeout: "0", ...(since ? { since } : {}) });
    const raw = (await call(bot.accessToken)("GET", `/_matrix/client/v3/sync?${query}`, undefined)) as {
      next_batch: string;
    };
    await device.receiveSync(raw);
    since = raw.next_batch;
  }

  const settings = (extra: Record<string, unknown> = {}) =>
    roomCryptoSettings({ ...MEGOLM, ...extra }, "shared")!;

  it("creates the device once, writes its store to Redis sealed, and reopens with the same keys", async () => {
    const first = await open();
    const keys = first.identityKeys;
    expect(hs.keys.deviceKeys(bot.userId, bot.deviceId)).toBeDefined();
    const stored = await redis.redis.hgetallBuffer(
      redis.keys.matrixDevice(bot.userId, bot.deviceId, "store"),
    );
    const sealed = Object.entries(stored).filter(([field]) => field !== "meta" && field !== "sync");
    expect(sealed.length).toBeGreaterThan(3);
    // Sealed: the identity's public key is in the clear metadata only, not in any sealed field.
    expect(JSON.parse(stored.meta!.toString())).toMatchObject({
      deviceId: bot.deviceId,
      curve25519: keys.curve25519,
    });
    for (const [field, bytes] of sealed)
      expect(bytes.includes(Buffer.from(keys.curve25519)), field).toBe(false);
    await first.close();

    const again = await open();
    expect(again.identityKeys).toEqual(keys);
  });

  it("writes only what changed: a message encrypted rewrites its session, not every room key", async () => {
    const device = await open();
    const peer = await E2eePeer.login(hs, alice, "ALICE1");
    for (let i = 0; i < 5; i++) {
      await peer.rotate(roomId);
      await peer.sendText(roomId, `q${i}`);
    }
    await botSync(device);
    const key = redis.keys.matrixDevice(bot.userId, bot.deviceId, "store");
    // The first message starts the bot's session (and keeps its own copy of the room key).
    await device.encrypt(roomId, "m.room.message", { msgtype: "m.notice", body: "a" }, [alice], settings());
    const before = await redis.redis.hgetallBuffer(key);
    await device.encrypt(roomId, "m.room.message", { msgtype: "m.notice", body: "b" }, [alice], settings());
    const after = await redis.redis.hgetallBuffer(key);
    const changed = Object.keys(after).filter(
      (f) => f.startsWith("part:") && !after[f]!.equals(before[f] ?? Buffer.alloc(0)),
    );
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.some((f) => f.includes("inbound_group_sessions"))).toBe(false);
    await device.close();
    // And what was written reopens as the same device with the same sessions.
    const again = await open();
    const answer = hs.send(
      roomId,
      bot.userId,
      "m.room.encrypted",
      await again.encrypt(roomId, "m.room.message", { msgtype: "m.notice", body: "c" }, [alice], settings()),
    );
    expect(await peer.decrypt(answer)).toMatchObject({ content: { body: "c" } });
  });

  it("writes its whole store again when the store vanished from Redis under it", async () => {
    const device = await open();
    const keys = device.identityKeys;
    await device.encrypt(roomId, "m.room.message", { msgtype: "m.notice", body: "x" }, [alice], settings());
    await redis.redis.del(redis.keys.matrixDevice(bot.userId, bot.deviceId, "store"));
    await device.encrypt(roomId, "m.room.message", { msgtype: "m.notice", body: "y" }, [alice], settings());
    await device.close();
    const again = await open();
    expect(again.identityKeys).toEqual(keys);
    await again.close();
  });

  it("refuses a store it cannot decrypt and a lost store, instead of becoming a new device", async () => {
    await (await open()).close();
    await expect(open({ storeKey: "another key of enough length" })).rejects.toBeInstanceOf(
      UnreadableCryptoStoreError,
    );
    await redis.redis.del(redis.keys.matrixDevice(bot.userId, bot.deviceId, "store"));
    const lost = open();
    await expect(lost).rejects.toBeInstanceOf(LostCryptoStoreError);
    await expect(lost).rejects.toThrow(/new access token is a new device/);
  });

  it("cannot write the store once another process holds the lease", async () => {
    const device = await open();
    await redis.redis.set(leaseKey(), "someone-else", "PX", 60_000);
    await expect(
      device.encrypt(roomId, "m.room.message", { msgtype: "m.notice", body: "x" }, [alice], settings()),
    ).rejects.toBeInstanceOf(DeviceLeaseLostError);
  });

  it("decrypts what a person sends and encrypts answers only its recipients' devices can read", async () => {
    const device = await open();
    const peer = await E2eePeer.login(hs, alice, "ALICE1");
    const mallory = hs.registerUser("mallory").userId;
    hs.joinAs(roomId, mallory);
    const eve = await E2eePeer.login(hs, mallory, "MALLORY1");
    await eve.sync();

    const question = await peer.sendText(roomId, "what ran last night?");
    await botSync(device);
    const clear = await device.decrypt(roomId, question);
    expect(clear).toMatchObject({ type: "m.room.message", content: { body: "what ran last night?" } });
    expect(clear.senderDevice).toBe("ALICE1");

    const content = await device.encrypt(
      roomId,
      "m.room.message",
      {
        msgtype: "m.notice",
        body: "nightly: 3 runs",
        "m.relates_to": { "m.in_reply_to": { event_id: question.event_id } },
      },
      [alice],
      settings(),
    );
    // The relation stays readable to the server, as the spec wants; the body does not.
    expect(content).toMatchObject({
      algorithm: "m.megolm.v1.aes-sha2",
      "m.relates_to": { "m.in_reply_to": { event_id: question.event_id } },
    });
    expect(JSON.stringify(content)).not.toContain("nightly");
    const answer = hs.send(roomId, bot.userId, "m.room.encrypted", content);
    expect(await peer.decrypt(answer)).toMatchObject({ content: { body: "nightly: 3 runs" } });
    expect(await eve.decrypt(answer)).toBeNull();
    expect(hs.keys.sent.some((m) => m.sender === bot.userId && m.userId === mallory)).toBe(false);
  });

  it("tells when a late room key arrives, and then decrypts the event that failed", async () => {
    const device = await open();
    const arrived: ArrivedRoomKey[] = [];
    device.onRoomKeys((keys) => arrived.push(...keys));
    const peer = await E2eePeer.login(hs, alice, "ALICE1");
    hs.keys.hold(bot.userId, bot.deviceId);
    const question = await peer.sendText(roomId, "late one");
    await botSync(device);
    const failure = await device.decrypt(roomId, question).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UndecryptableEventError);
    expect(failure).toMatchObject({ code: "missing-key", sessionId: question.content.session_id });

    hs.keys.release(bot.userId, bot.deviceId);
    await botSync(device);
    expect(arrived).toContainEqual({ roomId, sessionId: question.content.session_id });
    expect((await device.decrypt(roomId, question)).content.body).toBe("late one");
  });

  it("keeps decrypting after the sender rotates their session and adds a device", async () => {
    const device = await open();
    const phone = await E2eePeer.login(hs, alice, "ALICE1");
    const first = await phone.sendText(roomId, "before rotation");
    await phone.rotate(roomId);
    const second = await phone.sendText(roomId, "after rotation");
    expect(second.content.session_id).not.toBe(first.content.session_id);
    const laptop = await E2eePeer.login(hs, alice, "ALICE2");
    const third = await laptop.sendText(roomId, "from the new laptop");
    await botSync(device);
    for (const [event, body] of [
      [first, "before rotation"],
      [second, "after rotation"],
      [third, "from the new laptop"],
    ] as const) {
      expect((await device.decrypt(roomId, event)).content.body).toBe(body);
    }
    // The bot's answer reaches the new device too.
    const content = await device.encrypt(
      roomId,
      "m.room.message",
      { msgtype: "m.notice", body: "both see this" },
      [alice],
      settings(),
    );
    const answer = hs.send(roomId, bot.userId, "m.room.encrypted", content);
    expect(await laptop.decrypt(answer)).toMatchObject({ content: { body: "both see this" } });
    expect(await phone.decrypt(answer)).toMatchObject({ content: { body: "both see this" } });
  });

  it("rotates its own outbound session as the room's settings say", async () => {
    const device = await open();
    await E2eePeer.login(hs, alice, "ALICE1");
    const sessions: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const content = await device.encrypt(
        roomId,
        "m.room.message",
        { msgtype: "m.notice", body: `n${i}` },
        [alice],
        settings({ rotation_period_msgs: 2 }),
      );
      sessions.push(content.session_id);
    }
    expect(sessions[1]).toBe(sessions[0]);
    expect(sessions[2]).not.toBe(sessions[0]);
  });

  it("keeps the outbound session across a restart (same device, no replayed message index)", async () => {
    const device = await open();
    const peer = await E2eePeer.login(hs, alice, "ALICE1");
    const before = await device.encrypt(
      roomId,
      "m.room.message",
      { msgtype: "m.notice", body: "one" },
      [alice],
      settings(),
    );
    await device.close();
    const again = await open();
    const after = await again.encrypt(
      roomId,
      "m.room.message",
      { msgtype: "m.notice", body: "two" },
      [alice],
      settings(),
    );
    expect(after.session_id).toBe(before.session_id);
    const one = hs.send(roomId, bot.userId, "m.room.encrypted", before);
    const two = hs.send(roomId, bot.userId, "m.room.encrypted", after);
    expect(await peer.decrypt(one)).toMatchObject({ content: { body: "one" } });
    expect(await peer.decrypt(two)).toMatchObject({ content: { body: "two" } });
  });
});
