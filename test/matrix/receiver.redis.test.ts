import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundEvent } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { MatrixReceiver } from "../../src/matrix/matrix-receiver.js";
import { KEYCAPS } from "../../src/render/matrix.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { matrixConfig, RecordingInbox } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { eventually } from "../support/wait.js";

type Rooms = Parameters<typeof matrixConfig>[2];

describe("MatrixReceiver against the homeserver stand-in", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let alice: string;
  let mallory: string;
  const running: MatrixReceiver[] = [];

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("bot");
    alice = hs.registerUser("alice").userId;
    mallory = hs.registerUser("mallory").userId;
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await hs.close();
    await redis.cleanup();
  });

  async function start(
    rooms: Rooms,
    inbox = new RecordingInbox(),
    maxFileBytes = 1000,
  ): Promise<RecordingInbox> {
    const receiver = new MatrixReceiver({
      config: matrixConfig(hs.url, bot.accessToken, rooms),
      maxFileBytes,
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

  const texts = (inbox: RecordingInbox): string[] =>
    inbox.events.flatMap((e) => (e.kind === "message" ? [e.text] : []));

  /** Sends a marker and waits for it, so everything sent before it has been seen too. */
  async function settle(inbox: RecordingInbox, roomId: string): Promise<void> {
    const marker = hs.sendText(roomId, alice, `marker ${Math.random()}`);
    await eventually(() =>
      expect(inbox.events.some((e) => e.eventId === `mx:${marker.event_id}`)).toBe(true),
    );
  }

  it("joins on an allowed inviter's invite only; strangers' and unconfigured rooms' invites are declined", async () => {
    const bound = hs.createRoom(alice);
    const boundByStranger = hs.createRoom(mallory);
    const unconfigured = hs.createRoom(alice);
    await start([
      { room: bound, users: [alice] },
      { room: boundByStranger, users: [alice] },
    ]);
    hs.invite(bound, alice, bot.userId);
    hs.invite(boundByStranger, mallory, bot.userId);
    hs.invite(unconfigured, alice, bot.userId);
    await eventually(() => {
      expect(hs.membership(bound, bot.userId)).toBe("join");
      expect(hs.membership(boundByStranger, bot.userId)).toBe("leave");
      expect(hs.membership(unconfigured, bot.userId)).toBe("leave");
    });
  });

  it("accepts invites from the configured inviters instead of the room's users when set", async () => {
    const roomId = hs.createRoom(mallory, { members: [alice] });
    const receiver = new MatrixReceiver({
      config: matrixConfig(hs.url, bot.accessToken, [{ room: roomId, users: [alice] }], [mallory]),
      maxFileBytes: 1000,
      redis: redis.redis,
      keys: redis.keys,
      inbox: new RecordingInbox(),
      log: silentLogger(),
      syncTimeoutMs: 200,
    });
    running.push(receiver);
    await receiver.start();
    hs.invite(roomId, mallory, bot.userId);
    await eventually(() => expect(hs.membership(roomId, bot.userId)).toBe("join"));
  });

  it("answers nothing from before its first sync or from before it joined", async () => {
    const known = hs.createRoom(alice, { members: [bot.userId] });
    const later = hs.createRoom(alice);
    hs.sendText(known, alice, "old one");
    hs.sendText(known, alice, "old two");
    const inbox = await start([
      { room: known, users: [alice] },
      { room: later, users: [alice] },
    ]);
    hs.sendText(later, alice, "before the bot came");
    hs.invite(later, alice, bot.userId);
    await eventually(() => expect(hs.membership(later, bot.userId)).toBe("join"));
    hs.sendText(known, alice, "new in known");
    hs.sendText(later, alice, "new in later");
    await settle(inbox, later);
    expect(texts(inbox).filter((t) => !t.startsWith("marker"))).toEqual(["new in known", "new in later"]);
  });

  it("resumes after a restart where it stopped: nothing old again, nothing missed", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId] });
    const first = await start([{ room: roomId, users: [alice] }]);
    hs.sendText(roomId, alice, "before restart");
    await settle(first, roomId);
    for (const r of running.splice(0)) await r.stop();
    expect(await redis.redis.hget(redis.keys.matrixStorage(bot.userId), "sync-token")).toMatch(/^s\d+$/);
    hs.sendText(roomId, alice, "while down");
    const second = await start([{ room: roomId, users: [alice] }]);
    await settle(second, roomId);
    expect(texts(second).filter((t) => !t.startsWith("marker"))).toEqual(["while down"]);
  });

  it("reads messages: own events, notices and edits ignored; reply fallback stripped; thread kept", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId, mallory] });
    const inbox = await start([{ room: roomId, users: [alice] }]);
    const offer = hs.send(roomId, bot.userId, "m.room.message", { msgtype: "m.notice", body: "1️⃣ a\n2️⃣ b" });
    hs.sendText(roomId, mallory, "another bot says hi", { msgtype: "m.notice" });
    const question = hs.sendText(roomId, alice, "first");
    hs.send(roomId, alice, "m.room.message", {
      msgtype: "m.text",
      body: "* first (edited)",
      "m.new_content": { msgtype: "m.text", body: "first (edited)" },
      "m.relates_to": { rel_type: "m.replace", event_id: question.event_id },
    });
    const reply = hs.sendText(roomId, alice, "2", { replyTo: offer.event_id });
    const threaded = hs.sendText(roomId, alice, "in a thread", { threadRoot: question.event_id });
    const stranger = hs.sendText(roomId, mallory, "let me in");
    await settle(inbox, roomId);
    const byId = (id: string): InboundEvent | undefined => inbox.events.find((e) => e.eventId === `mx:${id}`);
    expect(texts(inbox).filter((t) => !t.startsWith("marker"))).toEqual(["first", "2", "in a thread"]);
    expect(byId(reply.event_id)?.origin).toMatchObject({ replyTo: offer.event_id, answerTo: reply.event_id });
    expect(byId(threaded.event_id)?.origin).toMatchObject({ threadRoot: question.event_id });
    expect(byId(threaded.event_id)?.origin).not.toHaveProperty("replyTo");
    expect(byId(question.event_id)).toMatchObject({
      platform: "matrix",
      room: `matrix:${roomId}`,
      namespace: "runs",
      sender: { id: alice, allowed: true },
    });
    // The stranger is refused at the edge: one notice in reply, nothing queued.
    expect(byId(stranger.event_id)).toBeUndefined();
    const refusal = await hs.waitForEvent(
      roomId,
      (e) => e.sender === bot.userId && String(e.content.body).includes("not allowed"),
    );
    expect(refusal.content["m.relates_to"]).toEqual({ "m.in_reply_to": { event_id: stranger.event_id } });
  });

  it("allows users at or above the room's power level", async () => {
    const carol = hs.registerUser("carol").userId;
    const roomId = hs.createRoom(alice, {
      members: [bot.userId, carol, mallory],
      powerLevels: { [carol]: 50 },
    });
    const inbox = await start([{ room: roomId, users: [], powerLevel: 50 }]);
    const fromCarol = hs.sendText(roomId, carol, "moderator here");
    const fromMallory = hs.sendText(roomId, mallory, "nobody here");
    await settle(inbox, roomId);
    const sender = (id: string) => inbox.events.find((e) => e.eventId === `mx:${id}`)?.sender;
    expect(sender(fromCarol.event_id)?.allowed).toBe(true);
    expect(sender(fromMallory.event_id)).toBeUndefined();
    hs.setState(roomId, alice, "m.room.power_levels", "", { users: { [alice]: 100, [mallory]: 60 } });
    const promoted = hs.sendText(roomId, mallory, "promoted");
    await settle(inbox, roomId);
    expect(sender(promoted.event_id)?.allowed).toBe(true);
  });

  it("turns keycap reactions on the bot's messages into reactions; other reactions are ignored", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId] });
    const inbox = await start([{ room: roomId, users: [alice] }]);
    const root = hs.sendText(roomId, alice, "root");
    const question = hs.sendText(roomId, alice, "question", { threadRoot: root.event_id });
    const offer = hs.send(roomId, bot.userId, "m.room.message", {
      msgtype: "m.notice",
      body: "pick",
      "m.relates_to": {
        rel_type: "m.thread",
        event_id: root.event_id,
        is_falling_back: false,
        "m.in_reply_to": { event_id: question.event_id },
      },
    });
    const keycap = hs.react(roomId, alice, offer.event_id, KEYCAPS[1]);
    const bare = hs.react(roomId, alice, offer.event_id, "3\u20E3");
    hs.react(roomId, alice, offer.event_id, "👍");
    hs.react(roomId, alice, question.event_id, KEYCAPS[0]);
    await settle(inbox, roomId);
    const reactions = inbox.events.filter((e) => e.kind === "reaction");
    expect(reactions.map((e) => e.eventId)).toEqual([`mx:${keycap.event_id}`, `mx:${bare.event_id}`]);
    expect(reactions[0]).toMatchObject({
      kind: "reaction",
      messageRef: offer.event_id,
      number: 2,
      origin: { answerTo: question.event_id, threadRoot: root.event_id, replyTo: offer.event_id },
    });
    expect(reactions[1]).toMatchObject({ number: 3 });
  });

  it("downloads text files through the media API; other files are rejected with a reason", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId] });
    const inbox = await start([{ room: roomId, users: [alice] }], new RecordingInbox(), 100);
    hs.sendFile(roomId, alice, { name: "draft.md", mime: "text/markdown", data: "kd-0.5 reached 7.9 WER ✓" });
    hs.sendFile(roomId, alice, {
      name: "photo.png",
      mime: "image/png",
      data: Buffer.from([137, 80, 78, 71]),
    });
    hs.sendFile(roomId, alice, { name: "big.txt", mime: "text/plain", data: "x".repeat(101) });
    hs.sendFile(roomId, alice, { name: "liar.txt", mime: "text/plain", data: "y".repeat(150), size: 10 });
    hs.sendFile(roomId, alice, {
      name: "bad.txt",
      mime: "text/plain",
      data: Buffer.from([0xff, 0xfe, 0x00]),
    });
    // Files are read off the sync loop, so they may arrive after later messages.
    await eventually(() => expect(inbox.events.filter((e) => e.kind === "file")).toHaveLength(5));
    const files = inbox.events.flatMap((e) => (e.kind === "file" ? [e.file] : []));
    expect(files[0]).toEqual({
      name: "draft.md",
      mime: "text/markdown",
      size: 26,
      text: "kd-0.5 reached 7.9 WER ✓",
    });
    expect(files.slice(1).map((f) => [f.name, f.text, f.rejected])).toEqual([
      ["photo.png", undefined, expect.stringContaining("not a text file")],
      ["big.txt", undefined, expect.stringContaining("up to 100 bytes")],
      ["liar.txt", undefined, expect.stringContaining("the limit is 100 bytes")],
      ["bad.txt", undefined, expect.stringContaining("not UTF-8")],
    ]);
  });

  it("is not silenced by an encrypted event in a room that is not encrypted", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId] });
    const inbox = await start([{ room: roomId, users: [alice] }]);
    hs.send(roomId, alice, "m.room.encrypted", { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "..." });
    const after = hs.sendText(roomId, alice, "still here?");
    await settle(inbox, roomId);
    expect(inbox.events.map((e) => e.eventId)).toContain(`mx:${after.event_id}`);
    expect(hs.sentBy(roomId, bot.userId, "m.room.message")).toEqual([]);
  });

  it("without a store key reads nothing in an encrypted bound room and sends nothing there, across restarts", async () => {
    const encrypted = hs.createRoom(alice, { members: [bot.userId], encrypted: true });
    const turning = hs.createRoom(alice, { members: [bot.userId] });
    const plain = hs.createRoom(alice, { members: [bot.userId] });
    const rooms = [
      { room: encrypted, users: [alice] },
      { room: turning, users: [alice] },
      { room: plain, users: [alice] },
    ];
    const inbox = await start(rooms);
    hs.sendText(encrypted, alice, "plain text in an encrypted room");
    hs.encrypt(turning, alice);
    hs.send(turning, alice, "m.room.encrypted", { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "..." });
    hs.sendText(turning, alice, "after encryption");
    await settle(inbox, plain);
    for (const r of running.splice(0)) await r.stop();
    const again = await start(rooms);
    hs.send(encrypted, alice, "m.room.encrypted", { algorithm: "m.megolm.v1.aes-sha2", ciphertext: "..." });
    hs.sendText(encrypted, alice, "plain again");
    await settle(again, plain);
    // Nothing goes into an encrypted room in the clear, not even a notice.
    expect(hs.sentBy(encrypted, bot.userId).filter((e) => e.state_key === undefined)).toEqual([]);
    expect(hs.sentBy(turning, bot.userId).filter((e) => e.state_key === undefined)).toEqual([]);
    const rooms_ = (i: RecordingInbox) => new Set(i.events.map((e) => e.room));
    expect(rooms_(inbox)).toEqual(new Set([`matrix:${plain}`]));
    expect(rooms_(again)).toEqual(new Set([`matrix:${plain}`]));
  });
});
