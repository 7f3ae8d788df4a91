import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { createMatrixPlatform } from "../../src/matrix/matrix-platform.js";
import { CHOSEN_MARK } from "../../src/matrix/matrix-sender.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { EVERYTHING_COMMAND } from "../support/everything.js";
import { E2eePeer } from "../support/matrix-e2ee-peer.js";
import { MatrixHomeserverStandin, type StandinEvent } from "../support/matrix-homeserver-standin.js";
import { FAST_RETRY, runsAnswer } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { callsIn, demoNamespaces } from "../support/spine.js";
import { eventually, waitFor } from "../support/wait.js";

type Relation = {
  rel_type?: string;
  event_id?: string;
  key?: string;
  "m.in_reply_to"?: { event_id?: string };
};
const relation = (e: StandinEvent) => e.content["m.relates_to"] as Relation | undefined;
const PNG_MAGIC = Buffer.from("89504e47", "hex");

describe("an end-to-end encrypted Matrix room through startRuntime, the stand-in and encrypting peers", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let runtime: Runtime;
  let bot: { userId: string; accessToken: string; deviceId: string };
  let alice: E2eePeer;
  let mallory: E2eePeer;
  let room: string;
  let tools: string;
  let callLog: string;
  let start: () => Promise<Runtime>;

  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("roomgate", "RGDEVICE");
    const aliceId = hs.registerUser("alice").userId;
    const malloryId = hs.registerUser("mallory").userId;
    room = hs.createRoom(aliceId, { name: "ops", members: [malloryId], encrypted: true });
    tools = hs.createRoom(aliceId, { name: "tools", encrypted: true });
    const demo = demoNamespaces({}, ["runs"]);
    callLog = demo.callLog;
    const config = ConfigSchema.parse({
      namespaces: {
        ...demo.config.namespaces,
        everything: { command: EVERYTHING_COMMAND, prefix: "", ask: false },
      },
      matrix: {
        homeserver: hs.url,
        accessToken: bot.accessToken,
        storeKey: "a store key for the tests, long enough",
        rooms: [
          { room, namespace: "runs", users: [aliceId], respond: "all" },
          { room: tools, namespace: "everything", users: [aliceId], respond: "all" },
        ],
      },
    });
    const platform = createMatrixPlatform({ syncTimeoutMs: 300, retry: FAST_RETRY, typingRefreshMs: 200 });
    start = () =>
      startRuntime({
        config,
        redisUrl: redis.url,
        prefix: redis.prefix,
        log: silentLogger(),
        platforms: [platform],
      });
    runtime = await start();
    alice = await E2eePeer.login(hs, aliceId, "ALICEPHONE");
    mallory = await E2eePeer.login(hs, malloryId, "MALLORY1");
  });
  afterAll(async () => {
    await runtime?.stop();
    await hs.close();
    await redis.cleanup();
  });

  const calls = () => callsIn(callLog).map((line) => line.split("\t")[0]);
  /** The bot's encrypted answer to an event (its reply relation stays in the clear), decrypted by `reader`. */
  async function answerTo(eventId: string, reader = alice, inRoom = room) {
    const event = await hs.waitForEvent(
      inRoom,
      (e) =>
        e.sender === bot.userId &&
        e.type === "m.room.encrypted" &&
        relation(e)?.["m.in_reply_to"]?.event_id === eventId,
      20_000,
    );
    return { event, clear: await reader.decrypt(event) };
  }
  const reactionsOn = async (eventId: string) => {
    const out: string[] = [];
    for (const e of hs.sentBy(room, bot.userId, "m.room.encrypted")) {
      if (relation(e)?.rel_type !== "m.annotation" || relation(e)?.event_id !== eventId) continue;
      const clear = await alice.decrypt(e);
      const rel = clear?.content["m.relates_to"] as Relation | undefined;
      if (clear?.type === "m.reaction" && rel?.key) out.push(rel.key);
    }
    return out;
  };

  it("uploads its device keys first, then joins on the allowed user's invite", async () => {
    expect(hs.keys.deviceKeys(bot.userId, "RGDEVICE")).toBeDefined();
    hs.invite(room, alice.userId, bot.userId);
    hs.invite(tools, alice.userId, bot.userId);
    await eventually(() => {
      expect(hs.membership(room, bot.userId)).toBe("join");
      expect(hs.membership(tools, bot.userId)).toBe("join");
    }, 10_000);
  });

  it("answers an encrypted question encrypted, verbatim with its caveat, and nothing in the clear", async () => {
    const question = "which arm of my sweep won?";
    const expected = runsAnswer("runs.ask", { question });
    const asked = await alice.sendText(room, question);
    const { clear } = await answerTo(asked.event_id);
    expect(clear?.type).toBe("m.room.message");
    expect(clear?.content.msgtype).toBe("m.notice");
    expect(String(clear?.content.body)).toContain(expected.answer);
    expect(String(clear?.content.body)).toContain(expected.caveat);
    expect(String(clear?.content.formatted_body)).toContain("<blockquote>");
    expect(
      hs.sentBy(room, bot.userId).filter((e) => e.state_key === undefined && e.type !== "m.room.encrypted"),
    ).toEqual([]);
  });

  it("asks back with encrypted keycap reactions and runs the tool an encrypted keycap chooses", async () => {
    const asked = await alice.sendText(room, "hello there");
    const { event: offer } = await answerTo(asked.event_id);
    await eventually(
      async () => expect(await reactionsOn(offer.event_id)).toEqual(KEYCAPS.slice(0, 3)),
      10_000,
    );
    await alice.send(room, "m.reaction", {
      "m.relates_to": { rel_type: "m.annotation", event_id: offer.event_id, key: KEYCAPS[2] },
    });
    const listed = await hs.waitForEvent(
      room,
      (e) =>
        e.sender === bot.userId &&
        e.type === "m.room.encrypted" &&
        relation(e)?.["m.in_reply_to"]?.event_id === asked.event_id &&
        e.event_id !== offer.event_id,
      20_000,
    );
    expect(String((await alice.decrypt(listed))?.content.body)).toContain(runsAnswer("runs.list").answer);
    await eventually(async () => expect(await reactionsOn(offer.event_id)).toContain(CHOSEN_MARK), 10_000);
  });

  it("takes an encrypted file as the argument it asks for", async () => {
    const asked = await alice.sendText(room, "are the numbers in my draft right?");
    const { event: offer } = await answerTo(asked.event_id);
    const reply = await alice.send(room, "m.room.message", {
      msgtype: "m.text",
      body: "1",
      "m.relates_to": { "m.in_reply_to": { event_id: offer.event_id } },
    });
    const { clear: prompt } = await answerTo(reply.event_id);
    expect(String(prompt?.content.body)).toContain("draft");
    const draft = "kd-0.5 reached 7.9 WER on eval-v1.\n";
    const file = await alice.sendFile(room, "draft.md", "text/markdown", draft);
    expect(file.content.file).toBeUndefined();
    const { clear } = await answerTo(file.event_id);
    expect(String(clear?.content.body)).toContain(runsAnswer("runs.claims_check", { draft }).answer);
  });

  it("reads nothing sent in the clear in an encrypted room", async () => {
    const before = calls().length;
    hs.sendText(room, alice.userId, "which arm of my sweep won?");
    const marker = await alice.sendText(room, "what runs do I have?");
    await answerTo(marker.event_id);
    expect(calls().slice(before)).toEqual(["runs.ask"]);
  });

  it("encrypts the refusal for the stranger, and the answers to others for their devices only", async () => {
    const before = calls().length;
    const asked = await mallory.sendText(room, "which arm of my sweep won?");
    const { event: refusal, clear } = await answerTo(asked.event_id, mallory);
    expect(String(clear?.content.body)).toContain("not allowed");
    expect(calls()).toHaveLength(before);
    const question = await alice.sendText(room, "which arm of my sweep won?");
    const { event: answer, clear: forAlice } = await answerTo(question.event_id);
    expect(forAlice).not.toBeNull();
    expect(answer.content.session_id).not.toBe(refusal.content.session_id);
    expect(await mallory.decrypt(answer)).toBeNull();
    const readable = (await mallory.readFrom(room, bot.userId)).filter(
      (e) => e !== null && e.type !== "m.room.member",
    );
    expect(readable.map((e) => e?.content.body)).toEqual([clear?.content.body]);
  });

  it("answers late, not never, a question whose room key arrives late", async () => {
    // A new session whose key is held back on its way to the bot's device.
    await alice.rotate(room);
    hs.keys.hold(bot.userId, "RGDEVICE");
    const asked = await alice.sendText(room, "what runs do I have?");
    // The bot has seen the question and set it aside for its key.
    const parked = redis.keys.matrixDevice(bot.userId, "RGDEVICE", "undecrypted");
    await waitFor(async () => (await redis.redis.hexists(parked, asked.event_id)) === 1, undefined, "parked");
    hs.keys.release(bot.userId, "RGDEVICE");
    expect(
      hs.sentBy(room, bot.userId).some((e) => relation(e)?.["m.in_reply_to"]?.event_id === asked.event_id),
    ).toBe(false);
    const { clear } = await answerTo(asked.event_id);
    expect(String(clear?.content.body)).toContain(runsAnswer("runs.list").answer);
  });

  it("keeps answering after the person rotates their session and adds a device", async () => {
    await alice.rotate(room);
    const rotated = await alice.sendText(room, "which arm of my sweep won?");
    await answerTo(rotated.event_id);
    const laptop = await E2eePeer.login(hs, alice.userId, "ALICELAPTOP");
    const fromLaptop = await laptop.sendText(room, "which arm of my sweep won?");
    const { event } = await answerTo(fromLaptop.event_id, laptop);
    expect(await alice.decrypt(event)).not.toBeNull();
  });

  it("sends progress edits and an image encrypted", async () => {
    await answerTo((await alice.sendText(tools, "/tools")).event_id, alice, tools);
    const long = await alice.sendText(tools, "/call trigger-long-running-operation duration=2 steps=2");
    await answerTo(long.event_id, alice, tools);
    // The status notice is edited in place (m.replace), the edits encrypted like everything else.
    await eventually(async () => {
      const edits = [];
      for (const e of hs.sentBy(tools, bot.userId, "m.room.encrypted")) {
        if (relation(e)?.rel_type === "m.replace") edits.push(await alice.decrypt(e));
      }
      expect(edits.length).toBeGreaterThanOrEqual(1);
      expect(edits.at(-1)?.content["m.new_content"]).toMatchObject({ msgtype: "m.notice" });
    }, 10_000);
    const image = await alice.sendText(tools, "/call get-tiny-image");
    await answerTo(image.event_id, alice, tools);
    let sent: { content: Record<string, unknown> } | null = null;
    await eventually(async () => {
      for (const e of hs.sentBy(tools, bot.userId, "m.room.encrypted")) {
        const clear = await alice.decrypt(e);
        if (clear?.content.msgtype === "m.image") sent = clear;
      }
      expect(sent).not.toBeNull();
    }, 10_000);
    const content = sent!.content;
    expect(content.url).toBeUndefined();
    const bytes = alice.downloadFile(content.file as Record<string, unknown>);
    expect(bytes.subarray(0, 4)).toEqual(PNG_MAGIC);
    expect(hs.mediaAt(String((content.file as { url: string }).url))!.data.subarray(0, 4)).not.toEqual(
      PNG_MAGIC,
    );
  });

  it("is the same device after a restart, and answers there", async () => {
    const keys = hs.keys.deviceKeys(bot.userId, "RGDEVICE");
    await runtime.stop();
    const whileDown = await alice.sendText(room, "what runs do I have?");
    runtime = await start();
    expect(hs.keys.deviceKeys(bot.userId, "RGDEVICE")).toEqual(keys);
    await answerTo(whileDown.event_id);
  });
});
