import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runsAnswer } from "../support/matrix-fixtures.js";
import type { RoomgateProcess } from "../support/roomgate-process.js";
import {
  answerTo,
  e2eeWorld,
  LEASE_SECONDS,
  loggedSigningKey,
  loginAsNewDevice,
  publishedKeys,
  serverView,
  STORE_KEY,
  type E2eeWorld,
} from "./e2ee-world.js";
import type { NioHuman } from "./nio-human.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;
const WRONG_KEY = "not the key the store was sealed with";

/**
 * The bot's device on a real Synapse across `roomgate start` processes, as the person's
 * independent E2EE client (matrix-nio) sees it: verified once by its key, it stays the
 * same verified device across a restart with the store kept and a kill -9 with a standby
 * taking it over (one owner at a time, every question answered once); a wrong store key
 * and a lost store are refused at start, and the documented recovery (log in again) gives
 * a new device that answers.
 */
describe.skipIf(!homeserver || !sharedSecret)("the bot's encrypted device on a real Synapse", () => {
  let world: E2eeWorld;
  let alice: NioHuman;
  let owner: RoomgateProcess;
  let standby: RoomgateProcess;
  let bot: string;
  let ops: string;

  beforeAll(async () => {
    world = await e2eeWorld(homeserver!, sharedSecret!);
    ({ alice, ops } = world);
    bot = world.bot.userId;
    owner = world.startBot();
  });
  afterAll(async () => {
    await world?.close();
  });

  const keys = (deviceId = world.botDevice) => publishedKeys(world.aliceAccount, bot, deviceId);
  const ask = (question = "what runs do I have?") => alice.say(ops, question);
  /** Every event the bot sent in reply to `eventId`, as alice reads them. */
  const repliesTo = async (eventId: string) =>
    (await alice.events(ops)).filter(
      (e) =>
        e.sender === bot &&
        e.type === "m.room.message" &&
        e.relates_to?.["m.in_reply_to"]?.event_id === eventId,
    );

  it("joins on the allowed user's invite, its device keys published first", async () => {
    await world.inviteBot(owner);
    expect(await keys()).toBeTruthy();
  });

  it("is verified by comparing the key it logs with the one the server publishes; its answers then read as verified", async () => {
    const before = await answerTo(alice, bot, ops, await ask());
    expect(before.decrypted).toBe(true);
    expect(before.verified).toBe(false);
    const logged = loggedSigningKey(owner);
    expect(logged).toBeTruthy();
    expect((await keys())?.[`ed25519:${world.botDevice}`]).toBe(logged);
    // A key that is not the device's is refused, as Element's /verify refuses it.
    await expect(alice.verify(bot, world.botDevice, "AAAA" + logged!.slice(4))).rejects.toThrow(
      "key mismatch",
    );
    await alice.verify(bot, world.botDevice, logged!);
    const after = await answerTo(alice, bot, ops, await ask());
    expect(after.decrypted).toBe(true);
    expect(after.verified).toBe(true);
  });

  it("restarts with its store kept: the same device and keys, still verified, and answers what came while it was down", async () => {
    const published = await keys();
    expect(await owner.stop()).toBe(0);
    const whileDown = await ask("which arm of my sweep won?");
    owner = world.startBot();
    await expect.poll(() => owner.output, { timeout: 60_000 }).toContain("matrix receiver syncing");
    expect(owner.output).toContain("device keys loaded from Redis");
    expect(await keys()).toEqual(published);
    const answer = await answerTo(alice, bot, ops, whileDown);
    expect(answer.verified).toBe(true);
  });

  it("with two processes, one owns the device and answers each question once; the other stands by", async () => {
    standby = world.startBot();
    await expect.poll(() => standby.output, { timeout: 60_000 }).toContain("standing by to take it over");
    const asked = await Promise.all(["one?", "two?", "three?"].map((q) => ask(q)));
    for (const id of asked) await answerTo(alice, bot, ops, id);
    // Room for a second answer to arrive, if one were coming.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    for (const id of asked) expect(await repliesTo(id)).toHaveLength(1);
    expect(standby.output).not.toContain("matrix receiver syncing");
    expect(standby.output).not.toContain("this process owns the device");
  });

  it("after kill -9 of the owner, the standby takes the same device over within the lease + 2 s and answers", async () => {
    const published = await keys();
    const killedAt = Date.now();
    owner.child.kill("SIGKILL");
    const asked = await ask();
    await expect
      .poll(() => standby.output, { timeout: (LEASE_SECONDS + 10) * 1000, interval: 50 })
      .toContain("this process owns the device");
    const tookOverMs = Date.now() - killedAt;
    console.log(`takeover after kill -9: ${tookOverMs} ms (lease ${LEASE_SECONDS} s)`);
    expect(tookOverMs).toBeLessThanOrEqual((LEASE_SECONDS + 2) * 1000);
    const answer = await answerTo(alice, bot, ops, asked);
    expect(answer.verified).toBe(true);
    expect(String(answer.content.body)).toContain(runsAnswer("runs.list").answer);
    expect(await repliesTo(asked)).toHaveLength(1);
    expect(await keys()).toEqual(published);
    owner = standby;
  });

  it("refuses to start with a store key that does not open the store, also while the device is owned", async () => {
    const wrong = world.startBot({ storeKey: WRONG_KEY });
    await expect.poll(() => wrong.child.exitCode, { timeout: 60_000 }).not.toBeNull();
    expect(wrong.child.exitCode).not.toBe(0);
    expect(wrong.output).toContain("cannot be decrypted");
    expect(wrong.output).toContain("new access token is a new device");
    expect(wrong.output).not.toContain(WRONG_KEY);
    await answerTo(alice, bot, ops, await ask());
  });

  it("refuses to start as a silent new device when the store is lost, leaving the device's keys as they were", async () => {
    const published = await keys();
    expect(await owner.stop()).toBe(0);
    await world.redis.redis.del(world.redis.keys.matrixDevice(bot, world.botDevice, "store"));
    const lost = world.startBot();
    await expect.poll(() => lost.child.exitCode, { timeout: 60_000 }).not.toBeNull();
    expect(lost.child.exitCode).not.toBe(0);
    expect(lost.output).toContain("has keys on the homeserver but no crypto store in Redis");
    expect(lost.output).toContain("log the bot in again");
    expect(await keys()).toEqual(published);
  });

  it("recovers as documented: logged in again, it is a new, unverified device that answers", async () => {
    const login = await loginAsNewDevice(world.bot, "roomgate (recovered)");
    expect(login.deviceId).not.toBe(world.botDevice);
    owner = world.startBot({ token: login.token });
    await expect.poll(() => owner.output, { timeout: 60_000 }).toContain("matrix receiver syncing");
    expect(loggedSigningKey(owner)).toBe((await keys(login.deviceId))?.[`ed25519:${login.deviceId}`]);
    // alice's client learns of the new device from the server, as any client would.
    await expect
      .poll(async () => (await alice.devices(bot)).map((d) => d.device_id), { timeout: 30_000 })
      .toContain(login.deviceId);
    const answer = await answerTo(alice, bot, ops, await ask());
    expect(answer.decrypted).toBe(true);
    expect(answer.verified).toBe(false);
  });

  it("leaves only m.room.encrypted events from both sides on the server, and no store key in any output", async () => {
    const messages = await serverView(world.admin, ops);
    expect(new Set(messages.map((e) => e.sender))).toEqual(new Set([bot, alice.userId]));
    expect(messages.filter((e) => e.type !== "m.room.encrypted")).toEqual([]);
    for (const p of world.processes) expect(p.output).not.toContain(STORE_KEY);
  });
});
