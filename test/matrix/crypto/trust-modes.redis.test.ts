import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MatrixConfig } from "../../../src/core/config.js";
import { silentLogger } from "../../../src/core/log.js";
import { IdentityApprovals } from "../../../src/matrix/crypto/identity-approvals.js";
import { trustTexts } from "../../../src/matrix/crypto/trust-texts.js";
import { MatrixReceiver } from "../../../src/matrix/matrix-receiver.js";
import { E2eePeer } from "../../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../../support/matrix-homeserver-standin.js";
import { matrixConfig, RecordingInbox } from "../../support/matrix-fixtures.js";
import { publicKeyOf } from "../../support/matrix-standin-signing.js";
import { testRedis, type TestRedis } from "../../support/redis.js";

const STORE_KEY = "a store key for the tests, long enough";

/**
 * matrix.trust on the stand-in: whom the bot reads and shares its room keys with, and a
 * person whose pinned identity changed, refused with one notice until the operator
 * approves the new one.
 */
describe("matrix.trust: the bot's own send and read policy in encrypted rooms", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let alice: { userId: string; password: string };
  let bob: { userId: string };
  let room: string;
  const running: MatrixReceiver[] = [];

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot", "BOTDEV");
    alice = hs.registerUser("alice");
    bob = hs.registerUser("bob");
    room = hs.createRoom(alice.userId, { members: [bot.userId, bob.userId], encrypted: true });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await hs.close();
    await redis.cleanup();
  });

  async function start(extra: Partial<MatrixConfig> = {}) {
    const inbox = new RecordingInbox();
    const receiver = new MatrixReceiver({
      config: {
        ...matrixConfig(hs.url, bot.accessToken, [{ room, users: [alice.userId, bob.userId] }]),
        storeKey: STORE_KEY,
        ...extra,
      },
      maxFileBytes: 1000,
      redis: redis.redis,
      keys: redis.keys,
      inbox,
      log: silentLogger(),
      syncTimeoutMs: 200,
    });
    running.push(receiver);
    await receiver.start();
    return inbox;
  }
  const enqueued = (inbox: RecordingInbox) => () => inbox.events.map((e) => e.eventId);
  /** The bot's notices in reply to `eventId`, as `reader` decrypts them (null where it cannot). */
  const noticesTo = async (reader: E2eePeer, eventId: string) => {
    const out: (string | null)[] = [];
    for (const e of hs.sentBy(room, bot.userId, "m.room.encrypted")) {
      const relation = e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined;
      if (relation?.["m.in_reply_to"]?.event_id !== eventId) continue;
      const clear = await reader.decrypt(e);
      out.push(clear ? String(clear.content.body) : null);
    }
    return out;
  };
  const waitForNoticeTo = (eventId: string): Promise<StandinEvent> =>
    hs.waitForEvent(room, (e) => {
      const relation = e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined;
      return e.sender === bot.userId && relation?.["m.in_reply_to"]?.event_id === eventId;
    });

  it("cross-signed (default): reads a cross-signed device strictly, its answers show the bot cross-signed; an unsigned device is refused once and gets no key", async () => {
    const inbox = await start();
    const aliceStrict = await E2eePeer.login(hs, alice.userId, "ALICE1", { strict: true });
    const bobLegacy = await E2eePeer.login(hs, bob.userId, "BOBOLD", { crossSign: false });
    const question = await aliceStrict.sendText(room, "from a cross-signed device");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${question.event_id}`);

    const unsigned = await bobLegacy.sendText(room, "from a device bob never cross-signed");
    const notice = await waitForNoticeTo(unsigned.event_id);
    await bobLegacy.sendText(room, "again from it");
    expect(enqueued(inbox)()).not.toContain(`mx:${unsigned.event_id}`);
    // alice, strict as Element excluding insecure devices, reads the notice: from a device its owner signed.
    expect(await noticesTo(aliceStrict, unsigned.event_id)).toEqual([trustTexts.unsignedDevice(bob.userId)]);
    expect(await aliceStrict.senderTrust(notice)).toEqual({
      crossSigned: true,
      shield: "None",
      code: "none",
    });
    // bob's unsigned device was given no room key.
    expect(await noticesTo(bobLegacy, unsigned.event_id)).toEqual([null]);
    // Told once: the second message from that device got no second notice.
    expect(hs.sentBy(room, bot.userId, "m.room.encrypted")).toHaveLength(1);
  });

  it("all: reads a device nobody cross-signed, and shares its keys with it", async () => {
    const inbox = await start({ trust: "all" });
    const bobLegacy = await E2eePeer.login(hs, bob.userId, "BOBOLD", { crossSign: false });
    const question = await bobLegacy.sendText(room, "from a legacy client");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${question.event_id}`);
  });

  it("refuses a pinned person whose identity changed, tells the room once, and answers again once the operator approves", async () => {
    const inbox = await start();
    const aliceOne = await E2eePeer.login(hs, alice.userId, "ALICE1");
    const bobOne = await E2eePeer.login(hs, bob.userId, "BOB1");
    const first = await aliceOne.sendText(room, "before the change");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${first.event_id}`);
    // Someone replaces alice's cross-signing identity (a reset, with her password).
    await aliceOne.bootstrapCrossSigning(alice.password);
    const changed = await aliceOne.sendText(room, "after the change");
    await waitForNoticeTo(changed.event_id);
    const again = await aliceOne.sendText(room, "still changed");
    expect(enqueued(inbox)()).not.toContain(`mx:${changed.event_id}`);
    // The room is told (bob reads it); the new identity itself gets no room key until approved.
    expect(await noticesTo(bobOne, changed.event_id)).toEqual([trustTexts.identityChanged(alice.userId)]);
    expect(await noticesTo(aliceOne, changed.event_id)).toEqual([null]);
    expect(await noticesTo(bobOne, again.event_id)).toEqual([]);
    // The operator approves the new master key (what `roomgate matrix trust` records).
    const master = publicKeyOf(hs.keys.signing.keysOf(alice.userId)!.master);
    const approvals = new IdentityApprovals(redis.redis, redis.keys.matrixOperator(bot.userId, "trust"));
    await approvals.approve(alice.userId, master);
    const after = await aliceOne.sendText(room, "after the approval");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${after.event_id}`);
    expect(await approvals.pending()).toEqual({});
  });

  it("reads a device that reset her identity once the operator approved it, though the bot first knew that device unsigned", async () => {
    const inbox = await start();
    const aliceOne = await E2eePeer.login(hs, alice.userId, "ALICE1");
    const bobOne = await E2eePeer.login(hs, bob.userId, "BOB1");
    const before = await aliceOne.sendText(room, "before the change");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${before.event_id}`);
    // A new login of alice, not cross-signed yet: the bot learns it as unsigned (and refuses it).
    const phone = await E2eePeer.login(hs, alice.userId, "PHONE", { crossSign: false });
    const unsigned = await phone.sendText(room, "from a session she has not verified");
    await waitForNoticeTo(unsigned.event_id);
    // From it she replaces her identity (with her password): the device is now signed by the new one.
    await phone.bootstrapCrossSigning(alice.password);
    const changed = await phone.sendText(room, "from her new identity");
    await waitForNoticeTo(changed.event_id);
    expect(await noticesTo(bobOne, changed.event_id)).toEqual([trustTexts.identityChanged(alice.userId)]);
    // The operator approves it; her next message (the same session) is read, not refused.
    const approvals = new IdentityApprovals(redis.redis, redis.keys.matrixOperator(bot.userId, "trust"));
    await approvals.approve(alice.userId, publicKeyOf(hs.keys.signing.keysOf(alice.userId)!.master));
    const approved = await phone.sendText(room, "from her new identity, approved");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${approved.event_id}`);
    expect(await noticesTo(bobOne, approved.event_id)).toEqual([]);
  });

  it("an approval of another key than the person's current one pins nothing", async () => {
    const inbox = await start();
    const aliceOne = await E2eePeer.login(hs, alice.userId, "ALICE1");
    const first = await aliceOne.sendText(room, "before the change");
    await expect.poll(enqueued(inbox), { timeout: 10_000 }).toContain(`mx:${first.event_id}`);
    const oldMaster = publicKeyOf(hs.keys.signing.keysOf(alice.userId)!.master);
    await aliceOne.bootstrapCrossSigning(alice.password);
    const approvals = new IdentityApprovals(redis.redis, redis.keys.matrixOperator(bot.userId, "trust"));
    await approvals.approve(alice.userId, oldMaster);
    const changed = await aliceOne.sendText(room, "after the change");
    await waitForNoticeTo(changed.event_id);
    expect(enqueued(inbox)()).not.toContain(`mx:${changed.event_id}`);
  });
});
