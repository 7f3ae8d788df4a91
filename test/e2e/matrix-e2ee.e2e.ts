import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHOSEN_MARK } from "../../src/matrix/matrix-sender.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { runsAnswer } from "../support/matrix-fixtures.js";
import { registerWithSharedSecret } from "../support/matrix-synapse-client.js";
import type { RoomgateProcess } from "../support/roomgate-process.js";
import { callsIn } from "../support/spine.js";
import { answerTo, e2eeWorld, serverView, STORE_KEY, type E2eeWorld } from "./e2ee-world.js";
import { NioHuman, type HumanEvent } from "./nio-human.js";

const homeserver = process.env.SYNAPSE_URL;
const sharedSecret = process.env.SYNAPSE_SHARED_SECRET;
/** The tools room asks senders to rotate their Megolm session every this many messages. */
const TOOLS_ROTATION = 3;

/**
 * Conversations in end-to-end encrypted operator rooms on a real Synapse
 * (scripts/synapse-e2e.sh), the bot run as `roomgate start -c config.yaml` and the person
 * an independent E2EE client (matrix-nio with libolm, nio_human.py): answers, keycaps,
 * files, progress edits and images all encrypted; late keys, the person's rotated
 * sessions and new devices read; the bot's own session rotated per the room's settings;
 * a stranger in the room cannot read the bot's answers to others; the server holds only
 * `m.room.encrypted` events from both sides. The device's life (restart, takeover,
 * verification, recovery) is matrix-e2ee-device.e2e.ts.
 */
describe.skipIf(!homeserver || !sharedSecret)("conversations in encrypted rooms on a real Synapse", () => {
  let world: E2eeWorld;
  let alice: NioHuman;
  let mallory: NioHuman;
  let phone: NioHuman | undefined;
  let owner: RoomgateProcess;
  let bot: string;
  let ops: string;
  let tools: string;

  beforeAll(async () => {
    world = await e2eeWorld(homeserver!, sharedSecret!, TOOLS_ROTATION);
    ({ alice, ops, tools } = world);
    bot = world.bot.userId;
    const malloryAccount = await registerWithSharedSecret(homeserver!, sharedSecret!, "mallory");
    mallory = await NioHuman.login(
      homeserver!,
      malloryAccount.userId,
      malloryAccount.password,
      "mallory-phone",
    );
    owner = world.startBot();
  });
  afterAll(async () => {
    await mallory?.close();
    await phone?.close();
    await world?.close();
  });

  const calls = () => callsIn(world.callLog).map((line) => line.split("\t")[0]);
  const fromBot = (e: HumanEvent) => e.sender === bot;
  const reactionsOn = async (eventId: string) =>
    (await alice.events(ops))
      .filter((e) => fromBot(e) && e.type === "m.reaction" && e.relates_to?.event_id === eventId)
      .map((e) => e.relates_to?.key);

  it("joins the encrypted rooms on the allowed user's invite, its device keys published first", async () => {
    await world.inviteBot(owner);
    expect((await alice.devices(bot)).map((d) => d.device_id)).toEqual([world.botDevice]);
  });

  it("answers an encrypted question encrypted, verbatim with its caveat, and offers keycaps", async () => {
    const question = "which arm of my sweep won?";
    const expected = runsAnswer("runs.ask", { question });
    const answer = await answerTo(alice, bot, ops, await alice.say(ops, question));
    expect(answer.decrypted).toBe(true);
    expect(answer.content.msgtype).toBe("m.notice");
    expect(String(answer.content.body)).toContain(expected.answer);
    expect(String(answer.content.body)).toContain(expected.caveat!);
    expect(String(answer.content.formatted_body)).toContain("<blockquote>");
  });

  it("takes a choice by an encrypted keycap reaction, and marks it chosen", async () => {
    const asked = await alice.say(ops, "hello there");
    const offer = await answerTo(alice, bot, ops, asked);
    await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toEqual(KEYCAPS.slice(0, 3));
    await alice.react(ops, offer.event_id, KEYCAPS[2]);
    const listed = await answerTo(alice, bot, ops, asked, { except: [offer.event_id] });
    expect(String(listed.content.body)).toContain(runsAnswer("runs.list").answer);
    await expect.poll(() => reactionsOn(offer.event_id), { timeout: 30_000 }).toContain(CHOSEN_MARK);
  });

  it("takes an encrypted file as the argument it asks for", async () => {
    const offer = await answerTo(alice, bot, ops, await alice.say(ops, "are the numbers in my draft right?"));
    const prompt = await answerTo(alice, bot, ops, await alice.say(ops, "1", offer.event_id));
    expect(String(prompt.content.body)).toContain("draft");
    const draft = "kd-0.5 reached 7.9 WER on eval-v1.\n";
    const checked = await answerTo(
      alice,
      bot,
      ops,
      await alice.sendFile(ops, "draft.md", "text/markdown", draft),
    );
    expect(String(checked.content.body)).toContain(runsAnswer("runs.claims_check", { draft }).answer);
  });

  it("edits its progress notice in place and sends an image, all encrypted", async () => {
    await answerTo(alice, bot, tools, await alice.say(tools, "/tools"));
    const long = await alice.say(tools, "/call trigger-long-running-operation duration=4 steps=4");
    await answerTo(alice, bot, tools, long, { timeoutMs: 60_000 });
    await expect
      .poll(
        async () =>
          (await alice.events(tools)).filter(
            (e) => fromBot(e) && e.decrypted && e.relates_to?.rel_type === "m.replace",
          ).length,
        { timeout: 30_000 },
      )
      .toBeGreaterThanOrEqual(1);
    await alice.say(tools, "/call get-tiny-image");
    const image = await alice.waitFor(tools, (e) => fromBot(e) && e.content.msgtype === "m.image");
    expect(image.decrypted).toBe(true);
    expect(image.content.url).toBeUndefined();
    const png = await alice.download(image.content.file as Record<string, unknown>);
    expect(png.subarray(0, 4).toString("hex")).toBe("89504e47");
  });

  it("rotates its own session as the room's m.room.encryption asks (rotation_period_msgs)", async () => {
    const sessions = new Map<string, number>();
    for (const e of await serverView(world.admin, tools)) {
      if (e.sender !== bot || !e.content.session_id) continue;
      sessions.set(e.content.session_id, (sessions.get(e.content.session_id) ?? 0) + 1);
    }
    const sent = [...sessions.values()].reduce((a, b) => a + b, 0);
    expect(sent).toBeGreaterThan(TOOLS_ROTATION);
    expect(Math.max(...sessions.values())).toBeLessThanOrEqual(TOOLS_ROTATION);
    expect(sessions.size).toBeGreaterThanOrEqual(Math.ceil(sent / TOOLS_ROTATION));
  });

  it("refuses a stranger in the room, who cannot decrypt the bot's answers to others", async () => {
    await alice.invite(ops, mallory.userId);
    await mallory.join(ops);
    const before = calls().length;
    const refusal = await answerTo(mallory, bot, ops, await mallory.say(ops, "which arm of my sweep won?"));
    expect(String(refusal.content.body)).toContain("not allowed");
    expect(calls()).toHaveLength(before);
    const forAlice = await answerTo(alice, bot, ops, await alice.say(ops, "what runs do I have?"));
    expect(forAlice.decrypted).toBe(true);
    const seenByMallory = (await mallory.events(ops)).filter((e) => fromBot(e) && e.type !== "m.room.member");
    expect(seenByMallory.find((e) => e.event_id === forAlice.event_id)?.undecryptable).toBe(true);
    // Of everything the bot sent, mallory reads only what was addressed to her.
    expect(seenByMallory.filter((e) => e.decrypted).map((e) => e.event_id)).toEqual([refusal.event_id]);
  });

  it("keeps answering after the person's session rotates", async () => {
    const before = await alice.events(ops);
    await alice.rotate(ops);
    const asked = await alice.say(ops, "which arm of my sweep won?");
    await answerTo(alice, bot, ops, asked);
    const sessions = await serverView(world.admin, ops);
    const rotated = sessions.find((e) => e.event_id === asked)?.content.session_id;
    const earlier = before.filter((e) => e.sender === alice.userId).map((e) => e.event_id);
    const earlierSessions = new Set(
      sessions.filter((e) => earlier.includes(e.event_id)).map((e) => e.content.session_id),
    );
    expect(rotated).toBeTruthy();
    expect(earlierSessions.has(rotated)).toBe(false);
  });

  it("reads the person's new device and answers so that both of their devices can read it", async () => {
    phone = await NioHuman.login(homeserver!, alice.userId, world.aliceAccount.password, "alice-phone");
    await phone.join(ops);
    // alice's laptop learns of the phone as any client would (the server's device-list change).
    await expect
      .poll(async () => (await alice.devices(alice.userId)).map((d) => d.device_id), { timeout: 30_000 })
      .toContain(phone.deviceId);
    const asked = await phone.say(ops, "what runs do I have?");
    const onPhone = await answerTo(phone, bot, ops, asked);
    expect(onPhone.decrypted).toBe(true);
    expect(String(onPhone.content.body)).toContain(runsAnswer("runs.list").answer);
    const onLaptop = await answerTo(alice, bot, ops, asked);
    expect(onLaptop.decrypted).toBe(true);
  });

  it("answers late, not never, a question whose room key arrives late", async () => {
    const asked = await alice.sayWithLateKey(ops, "what runs do I have?", bot, world.botDevice);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(
      (await alice.events(ops)).some(
        (e) => fromBot(e) && e.relates_to?.["m.in_reply_to"]?.event_id === asked,
      ),
    ).toBe(false);
    await alice.deliverLateKey(asked);
    const answer = await answerTo(alice, bot, ops, asked);
    expect(String(answer.content.body)).toContain(runsAnswer("runs.list").answer);
    expect(owner.output).toContain("room key not here yet; the event waits for it");
    expect(owner.output).toContain("late room key came; event decrypted");
  });

  it("leaves only m.room.encrypted events from both sides on the server", async () => {
    for (const room of [ops, tools]) {
      const messages = await serverView(world.admin, room);
      const senders = new Set(messages.map((e) => e.sender));
      expect(senders.has(bot), room).toBe(true);
      expect(senders.has(alice.userId), room).toBe(true);
      expect(
        messages.filter((e) => e.type !== "m.room.encrypted"),
        room,
      ).toEqual([]);
    }
    for (const p of world.processes) expect(p.output).not.toContain(STORE_KEY);
  });
});
