import type { Sas } from "@matrix-org/matrix-sdk-crypto-wasm";
import {
  DeviceId,
  EventId,
  OtherUserIdentity,
  RoomId,
  UserId,
  VerificationMethod,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runMatrixVerify } from "../../../src/cli/matrix/run-matrix-verify.js";
import { ConfigSchema, type Config } from "../../../src/core/config.js";
import { silentLogger } from "../../../src/core/log.js";
import type { VerificationEntry } from "../../../src/matrix/crypto/verification-board.js";
import { MatrixReceiver } from "../../../src/matrix/matrix-receiver.js";
import { E2eePeer } from "../../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin } from "../../support/matrix-homeserver-standin.js";
import { RecordingInbox } from "../../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../../support/redis.js";

/**
 * A person verifies the bot (SAS, emoji) from their client; the bot's device owner
 * accepts and shows the emoji to the operator through `roomgate matrix verify`, which
 * alone confirms or cancels.
 */
describe("verifying the bot: emoji shown to the operator, never confirmed by the bot itself", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let aliceId: string;
  let config: Config;
  let receiver: MatrixReceiver;
  let alice: E2eePeer;
  let room: string;

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot", "BOTDEV");
    aliceId = hs.registerUser("alice").userId;
    room = hs.createRoom(aliceId, { members: [bot.userId], encrypted: true });
    config = ConfigSchema.parse({
      redis: { url: redis.url, prefix: redis.prefix },
      namespaces: {},
      matrix: {
        homeserver: hs.url,
        accessToken: bot.accessToken,
        storeKey: "a store key for the tests, long enough",
        rooms: [{ room, namespace: "runs", users: [aliceId] }],
      },
    });
    receiver = new MatrixReceiver({
      config: config.matrix!,
      maxFileBytes: 1000,
      redis: redis.redis,
      keys: redis.keys,
      inbox: new RecordingInbox(),
      log: silentLogger(),
      syncTimeoutMs: 200,
    });
    await receiver.start();
    alice = await E2eePeer.login(hs, aliceId, "ALICE1");
    await alice.learn(bot.userId);
  });
  afterEach(async () => {
    await receiver.stop();
    await hs.close();
    await redis.cleanup();
  });

  /** alice asks to verify the bot's device and starts emoji once the bot is ready. */
  async function aliceStartsSas(): Promise<Sas> {
    const device = await alice.machine.getDevice(new UserId(bot.userId), new DeviceId("BOTDEV"));
    if (!device) throw new Error("alice does not know the bot's device");
    const [request, outgoing] = device.requestVerification([VerificationMethod.SasV1]);
    await alice.sendOutgoing(outgoing);
    await alice.syncUntil(() => request.isReady());
    const started = await request.startSas();
    if (!started) throw new Error("SAS did not start");
    const [sas, start] = started;
    await alice.sendOutgoing(start as Parameters<E2eePeer["sendOutgoing"]>[0]);
    await alice.syncUntil(() => sas.canBePresented());
    return sas;
  }

  it("the operator sees the same emoji as the person and confirms them: the person's client verifies the bot's device", async () => {
    const sas = await aliceStartsSas();
    const shown: VerificationEntry[] = [];
    const out: string[] = [];
    const operator = runMatrixVerify({
      config,
      waitSeconds: 30,
      pollMs: 100,
      out: { write: (s: string) => out.push(s) } as unknown as NodeJS.WritableStream,
      confirm: async (entry) => {
        shown.push(entry);
        return true;
      },
    });
    // Until the operator answers, the bot confirms nothing.
    await expect.poll(() => shown.length, { timeout: 10_000 }).toBe(1);
    expect(shown[0]!.emoji?.map((e) => e.symbol)).toEqual(sas.emoji()?.map((e) => e.symbol));
    expect(shown[0]!.decimals).toEqual([...(sas.decimals() ?? [])]);
    expect(out.join("")).toContain(sas.emoji()![0]!.description);
    for (const request of await sas.confirm())
      await alice.sendOutgoing(request as Parameters<E2eePeer["sendOutgoing"]>[0]);
    await alice.syncUntil(() => sas.isDone());
    expect(await operator).toBe(0);
    expect(out.join("")).toContain("Verified");
    const device = await alice.machine.getDevice(new UserId(bot.userId), new DeviceId("BOTDEV"));
    expect(device?.isVerified()).toBe(true);
  });

  it("when the operator says they differ, the person's side is cancelled and nothing is verified", async () => {
    const sas = await aliceStartsSas();
    const answered = runMatrixVerify({
      config,
      waitSeconds: 30,
      pollMs: 100,
      out: { write: () => true } as unknown as NodeJS.WritableStream,
      confirm: async () => false,
    });
    expect(await answered).toBe(1);
    await alice.syncUntil(() => sas.isCancelled());
    const device = await alice.machine.getDevice(new UserId(bot.userId), new DeviceId("BOTDEV"));
    expect(device?.isVerified()).toBe(false);
  });

  it("a person who only starts and never gets an operator's answer stays unverified", async () => {
    const sas = await aliceStartsSas();
    for (const request of await sas.confirm())
      await alice.sendOutgoing(request as Parameters<E2eePeer["sendOutgoing"]>[0]);
    // Give the bot's device every chance to answer by itself: it does not.
    await alice.syncUntil(() => sas.haveWeConfirmed());
    for (let i = 0; i < 20; i++) await alice.sync();
    expect(sas.isDone()).toBe(false);
    const device = await alice.machine.getDevice(new UserId(bot.userId), new DeviceId("BOTDEV"));
    expect(device?.isVerified()).toBe(false);
  });

  it("in the room (Element's 'Verify user'): the bot accepts her request and the operator confirms the emoji", async () => {
    const identity = await alice.machine.getIdentity(new UserId(bot.userId));
    if (!(identity instanceof OtherUserIdentity)) throw new Error("alice does not know the bot's identity");
    const methods = [VerificationMethod.SasV1];
    // Element (matrix-js-sdk) sends its request and its steps in the clear, even in an encrypted room.
    const asked = await alice.sendClear(
      room,
      "m.room.message",
      JSON.parse(identity.verificationRequestContent(methods)) as Record<string, unknown>,
    );
    const request = identity.requestVerification(new RoomId(room), new EventId(asked.event_id), methods);
    // Her client feeds the bot's in-room verification events (decrypted) to its machine, as Element does.
    const fed = new Set<string>();
    const look = async () => {
      for (const event of hs.sentBy(room, bot.userId, "m.room.encrypted")) {
        if (fed.has(event.event_id)) continue;
        const clear = await alice.decrypt(event);
        if (!clear) continue;
        fed.add(event.event_id);
        const { pos: _pos, ...wire } = event;
        await alice.machine.receiveVerificationEvent(JSON.stringify({ ...wire, ...clear }), new RoomId(room));
      }
    };
    await alice.syncUntil(() => request.isReady(), 10_000, look);
    const started = await request.startSas();
    if (!started) throw new Error("SAS did not start");
    const [sas, start] = started;
    await alice.sendOutgoing(start as Parameters<E2eePeer["sendOutgoing"]>[0]);
    await alice.syncUntil(() => sas.canBePresented(), 10_000, look);
    const shown: VerificationEntry[] = [];
    const operator = runMatrixVerify({
      config,
      waitSeconds: 30,
      pollMs: 100,
      out: { write: () => true } as unknown as NodeJS.WritableStream,
      confirm: async (entry) => {
        shown.push(entry);
        return true;
      },
    });
    await expect.poll(() => shown.length, { timeout: 10_000 }).toBe(1);
    expect(shown[0]!.emoji?.map((e) => e.symbol)).toEqual(sas.emoji()?.map((e) => e.symbol));
    for (const step of await sas.confirm())
      await alice.sendOutgoing(step as Parameters<E2eePeer["sendOutgoing"]>[0]);
    await alice.syncUntil(() => sas.isDone(), 10_000, look);
    expect(await operator).toBe(0);
  });
});
