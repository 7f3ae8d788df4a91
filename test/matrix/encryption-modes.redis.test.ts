import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MatrixConfig } from "../../src/core/config.js";
import { PermanentSendError, TransientSendError } from "../../src/core/delivery-errors.js";
import { silentLogger } from "../../src/core/log.js";
import { MatrixE2ee } from "../../src/matrix/crypto/matrix-e2ee.js";
import { UNENCRYPTED_NOTICE } from "../../src/matrix/encryption-policy.js";
import { MatrixReceiver } from "../../src/matrix/matrix-receiver.js";
import { MatrixSender } from "../../src/matrix/matrix-sender.js";
import { registry } from "../../src/ops/metrics.js";
import { E2eePeer } from "../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import {
  deliveryContext,
  FAST_RETRY,
  matrixConfig,
  matrixQuestion,
  RecordingInbox,
} from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";

const STORE_KEY = "a store key for the tests, long enough";
const reply = { reply: { blocks: [{ type: "text" as const, text: "secret run results" }], options: [] } };

async function refused(reason: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find(
    (m) => m.name === "roomgate_matrix_plaintext_refused_total",
  );
  return Number(metric?.values.find((v) => v.labels.reason === reason)?.value ?? 0);
}

describe("matrix.encryption modes, and never plaintext into an encrypted room", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let alice: string;
  let encrypted: string;
  let plain: string;
  const running: MatrixReceiver[] = [];

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot", "BOTDEV");
    alice = hs.registerUser("alice").userId;
    encrypted = hs.createRoom(alice, { members: [bot.userId], encrypted: true });
    plain = hs.createRoom(alice, { members: [bot.userId] });
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await hs.close();
    await redis.cleanup();
  });

  const config = (extra: Partial<MatrixConfig>): MatrixConfig => ({
    ...matrixConfig(hs.url, bot.accessToken, [
      { room: encrypted, users: [alice] },
      { room: plain, users: [alice] },
    ]),
    ...extra,
  });
  const sender = (c: MatrixConfig, e2ee = new MatrixE2ee(c, silentLogger(), redis.redis, redis.keys)) =>
    new MatrixSender({ config: c, log: silentLogger(), retry: FAST_RETRY, e2ee });
  const sentBy = (roomId: string) => hs.sentBy(roomId, bot.userId).filter((e) => e.state_key === undefined);

  it("with encryption off sends nothing into an encrypted room (a final failure, counted) and plaintext elsewhere", async () => {
    const c = config({ encryption: "off", storeKey: STORE_KEY });
    const before = await refused("encryption_off");
    const question = hs.sendText(encrypted, alice, "anything");
    const delivery = sender(c).deliver(
      matrixQuestion(encrypted, question.event_id, alice),
      reply,
      deliveryContext("t-off"),
    );
    await expect(delivery).rejects.toBeInstanceOf(PermanentSendError);
    expect(sentBy(encrypted)).toEqual([]);
    expect(await refused("encryption_off")).toBe(before + 1);
    const asked = hs.sendText(plain, alice, "anything");
    await sender(c).deliver(matrixQuestion(plain, asked.event_id, alice), reply, deliveryContext("t-plain"));
    expect(sentBy(plain).map((e) => e.content.body)).toEqual(["secret run results"]);
  });

  it("without a store key, or while another process owns the device, sends nothing there either", async () => {
    const question = hs.sendText(encrypted, alice, "anything");
    const event = matrixQuestion(encrypted, question.event_id, alice);
    await expect(sender(config({})).deliver(event, reply, deliveryContext("t-nokey"))).rejects.toBeInstanceOf(
      PermanentSendError,
    );
    // Encryption is possible here, but the device is another process's: retried, so the turn can get there.
    await expect(
      sender(config({ storeKey: STORE_KEY })).deliver(event, reply, deliveryContext("t-elsewhere")),
    ).rejects.toBeInstanceOf(TransientSendError);
    expect(sentBy(encrypted)).toEqual([]);
  });

  it("notices a room that turned encryption on since its last look, before sending", async () => {
    const c = config({ encryption: "off" });
    const s = sender(c);
    const asked = hs.sendText(plain, alice, "one");
    await s.deliver(matrixQuestion(plain, asked.event_id, alice), reply, deliveryContext("t-1"));
    hs.encrypt(plain, alice);
    // "Not encrypted" is believed for a few seconds: the clock is moved past that, not waited out.
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    try {
      vi.setSystemTime(Date.now() + 5_100);
      const again = hs.sendText(plain, alice, "two");
      await expect(
        s.deliver(matrixQuestion(plain, again.event_id, alice), reply, deliveryContext("t-2")),
      ).rejects.toBeInstanceOf(PermanentSendError);
    } finally {
      vi.useRealTimers();
    }
    expect(sentBy(plain)).toHaveLength(1);
  });

  it("with encryption required serves encrypted rooms only, and tells an unencrypted one once why", async () => {
    const c = config({ encryption: "required", storeKey: STORE_KEY });
    const start = async () => {
      const inbox = new RecordingInbox();
      const r = new MatrixReceiver({
        config: c,
        maxFileBytes: 1000,
        redis: redis.redis,
        keys: redis.keys,
        inbox,
        log: silentLogger(),
        syncTimeoutMs: 200,
      });
      running.push(r);
      await r.start();
      return inbox;
    };
    const inbox = await start();
    const peer = await E2eePeer.login(hs, alice, "ALICE1");
    hs.sendText(plain, alice, "plain question");
    const secret = await peer.sendText(encrypted, "encrypted question");
    await expect
      .poll(() => inbox.events.map((e) => e.eventId), { timeout: 10_000 })
      .toContain(`mx:${secret.event_id}`);
    expect(inbox.events.map((e) => e.room)).toEqual([`matrix:${encrypted}`]);
    for (const r of running.splice(0)) await r.stop();
    await start();
    expect(sentBy(plain).map((e) => e.content.body)).toEqual([UNENCRYPTED_NOTICE]);
  });
});
