import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { E2eePeer } from "../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { RoomgateProcess } from "../support/roomgate-process.js";
import { demoNamespaces } from "../support/spine.js";
import { eventually } from "../support/wait.js";

const LEASE_SECONDS = 2;
const STORE_KEY = "the takeover test's store key";

const inReplyTo = (e: StandinEvent) =>
  (e.content["m.relates_to"] as { "m.in_reply_to"?: { event_id?: string } } | undefined)?.["m.in_reply_to"]
    ?.event_id;

describe("the bot's device across `roomgate start` processes: takeover, and a store that is lost or unreadable", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let alice: E2eePeer;
  let roomId: string;
  let config: Record<string, unknown>;
  const processes: RoomgateProcess[] = [];

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("roomgate", "RGDEVICE");
    const aliceId = hs.registerUser("alice").userId;
    roomId = hs.createRoom(aliceId, { members: [bot.userId], encrypted: true });
    alice = await E2eePeer.login(hs, aliceId, "ALICE1");
    config = {
      redis: { url: redis.url, prefix: redis.prefix },
      namespaces: demoNamespaces({}, ["runs"]).config.namespaces,
      matrix: {
        homeserver: hs.url,
        accessToken: "${MATRIX_TOKEN}",
        storeKey: "${MATRIX_STORE_KEY}",
        deviceLeaseSeconds: LEASE_SECONDS,
        rooms: [{ room: roomId, namespace: "runs", users: [aliceId], respond: "all" }],
      },
    };
  });
  afterAll(async () => {
    for (const p of processes) p.kill();
    await hs.close();
    await redis.cleanup();
  });

  const start = (storeKey = STORE_KEY, port?: number) => {
    const withHttp = port === undefined ? config : { ...config, http: { host: "127.0.0.1", port } };
    const p = RoomgateProcess.start(withHttp, {
      MATRIX_TOKEN: bot.accessToken,
      MATRIX_STORE_KEY: storeKey,
      LOG_LEVEL: "info",
    });
    processes.push(p);
    return p;
  };
  const owned = async (port: number) => {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return /^roomgate_matrix_device_owned (\d)$/m.exec(metrics)?.[1];
  };
  const answered = (eventId: string) =>
    hs.waitForEvent(
      roomId,
      (e) => e.sender === bot.userId && e.type === "m.room.encrypted" && inReplyTo(e) === eventId,
      20_000,
    );

  it("answers from the owner; after kill -9 the standby owns the same device within the lease + 2 s and answers what waited for a key", async () => {
    const first = start();
    await eventually(() => expect(first.output).toContain("matrix receiver syncing"), 30_000);
    const keys = hs.keys.deviceKeys(bot.userId, "RGDEVICE");
    await answered((await alice.sendText(roomId, "which arm of my sweep won?")).event_id);
    const port = await freePort();
    const second = start(STORE_KEY, port);
    await eventually(() => expect(second.output).toContain("standing by to take it over"), 30_000);
    await eventually(async () => expect(await owned(port).catch(() => undefined)).toBe("0"), 10_000);
    // While it stands by, encrypted rooms' turns are the owner's alone: the standby takes none.
    const asked = await Promise.all(["one?", "two?", "three?"].map((q) => alice.sendText(roomId, q)));
    for (const q of asked) await answered(q.event_id);
    expect(second.output).not.toContain("nothing was sent");
    // A question whose room key is still on its way when the owner dies: it waits in Redis.
    await alice.rotate(roomId);
    hs.keys.hold(bot.userId, "RGDEVICE");
    const late = await alice.sendText(roomId, "are you still there?");
    await eventually(() => expect(first.output).toContain("the event waits for it"), 10_000);
    const killedAt = Date.now();
    first.child.kill("SIGKILL");
    await expect
      .poll(() => second.output, { timeout: (LEASE_SECONDS + 5) * 1000, interval: 50 })
      .toContain("this process owns the device");
    expect(Date.now() - killedAt).toBeLessThanOrEqual((LEASE_SECONDS + 2) * 1000);
    expect(await owned(port)).toBe("1");
    // The key comes after the takeover: the new owner answers the question the dead one kept.
    hs.keys.release(bot.userId, "RGDEVICE");
    await answered(late.event_id);
    await answered((await alice.sendText(roomId, "what runs do I have?")).event_id);
    expect(hs.keys.deviceKeys(bot.userId, "RGDEVICE")).toEqual(keys);
    expect(await second.stop()).toBe(0);
  });

  it("refuses to start on a store it cannot decrypt, naming the recovery, also as a standby", async () => {
    const refused = async (wrong: RoomgateProcess) => {
      await eventually(() => expect(wrong.child.exitCode).not.toBeNull(), 30_000);
      expect(wrong.child.exitCode).not.toBe(0);
      expect(wrong.output).toContain("cannot be decrypted");
      expect(wrong.output).toContain("new access token is a new device");
      expect(wrong.output).not.toContain("a-different-key-of-enough-length");
    };
    await refused(start("a-different-key-of-enough-length"));
    // With the device owned elsewhere the wrong key is found at start, not at takeover.
    const ownerNow = start();
    // Nothing new in the room: ready after a catch-up sync, not after a 30 s long-poll.
    await eventually(() => expect(ownerNow.output).toContain("matrix receiver syncing"), 15_000);
    const standby = start("a-different-key-of-enough-length");
    await refused(standby);
    expect(standby.output).not.toContain("standing by");
    await answered((await alice.sendText(roomId, "still answering?")).event_id);
    expect(await ownerNow.stop()).toBe(0);
  });

  it("refuses to start as a silent new device when the store is gone but the device has keys", async () => {
    await redis.redis.del(redis.keys.matrixDevice(bot.userId, "RGDEVICE", "store"));
    const lost = start();
    await eventually(() => expect(lost.child.exitCode).not.toBeNull(), 30_000);
    expect(lost.child.exitCode).not.toBe(0);
    expect(lost.output).toContain("has keys on the homeserver but no crypto store in Redis");
  });
});
