import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EditsConfig } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { MatrixReceiver } from "../../src/matrix/matrix-receiver.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { matrixConfig, RecordingInbox } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { eventually } from "../support/wait.js";

type Rooms = Parameters<typeof matrixConfig>[2];

describe("Matrix rooms are gated like Telegram groups", () => {
  let hs: MatrixHomeserverStandin;
  let redis: TestRedis;
  let bot: { userId: string; accessToken: string };
  let alice: string;
  const running: MatrixReceiver[] = [];

  beforeEach(async () => {
    hs = await MatrixHomeserverStandin.start();
    redis = await testRedis();
    bot = hs.registerUser("feedbot");
    alice = hs.registerUser("alice").userId;
  });
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
    await hs.close();
    await redis.cleanup();
  });

  async function start(rooms: Rooms, edits?: EditsConfig): Promise<RecordingInbox> {
    const inbox = new RecordingInbox();
    const receiver = new MatrixReceiver({
      config: matrixConfig(hs.url, bot.accessToken, rooms),
      maxFileBytes: 1000,
      redis: redis.redis,
      keys: redis.keys,
      inbox,
      log: silentLogger(),
      syncTimeoutMs: 200,
      ...(edits ? { edits } : {}),
    });
    running.push(receiver);
    await receiver.start();
    return inbox;
  }

  const texts = (inbox: RecordingInbox): string[] =>
    inbox.events.flatMap((e) => (e.kind === "message" ? [e.text] : []));

  /** A command always passes the gate: once it arrived, everything sent before it was seen too. */
  async function settle(inbox: RecordingInbox, roomId: string): Promise<void> {
    const marker = hs.sendText(roomId, alice, `/status ${Math.random()}`);
    await eventually(() =>
      expect(inbox.events.some((e) => e.eventId === `mx:${marker.event_id}`)).toBe(true),
    );
    inbox.events.splice(
      inbox.events.findIndex((e) => e.eventId === `mx:${marker.event_id}`),
      1,
    );
  }

  it("takes mentions, replies to the bot and commands; other chatter is not sent anywhere", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId] });
    const inbox = await start([{ room: roomId, users: [alice], respond: undefined }]);
    hs.sendText(roomId, alice, "lunch anyone?");
    hs.sendText(roomId, alice, "feedbot: what should I read today?");
    hs.send(roomId, alice, "m.room.message", {
      msgtype: "m.text",
      body: "Feedbot the digest please",
      formatted_body: `<a href="https://matrix.to/#/${bot.userId}">Feedbot</a> the digest please`,
      "m.mentions": { user_ids: [bot.userId] },
    });
    hs.send(roomId, alice, "m.room.message", {
      msgtype: "m.text",
      body: "hey, can the bot list runs?",
      "m.mentions": { user_ids: [bot.userId] },
    });
    hs.sendText(roomId, alice, "!tools digest");
    hs.sendText(roomId, alice, "feedbot: !status");
    hs.sendText(roomId, alice, "!lunch is not a command");
    const own = hs.send(roomId, bot.userId, "m.room.message", { msgtype: "m.notice", body: "an answer" });
    hs.sendText(roomId, alice, "2", { replyTo: own.event_id });
    const chatter = hs.sendText(roomId, alice, "not to the bot");
    hs.sendText(roomId, alice, "still not", { replyTo: chatter.event_id });
    await settle(inbox, roomId);
    expect(texts(inbox)).toEqual([
      "what should I read today?",
      "the digest please",
      "hey, can the bot list runs?",
      "/tools digest",
      "/status",
      "2",
    ]);
  });

  it("takes every message with respond: all, and in a direct room", async () => {
    const everything = hs.createRoom(alice, { members: [bot.userId] });
    const direct = hs.createRoom(alice, { members: [bot.userId] });
    hs.setState(direct, bot.userId, "m.room.member", bot.userId, { membership: "join", is_direct: true });
    const inbox = await start([
      { room: everything, users: [alice], respond: "all" },
      { room: direct, users: [alice], respond: undefined },
    ]);
    hs.sendText(everything, alice, "hello everyone");
    hs.sendText(direct, alice, "hello bot");
    await settle(inbox, everything);
    await settle(inbox, direct);
    expect(texts(inbox).sort()).toEqual(["hello bot", "hello everyone"]);
  });

  it("ignores edits by default, and asks again when reask is on, within the window only", async () => {
    const roomId = hs.createRoom(alice, { members: [bot.userId] });
    const edit = (target: string, body: string) =>
      hs.send(roomId, alice, "m.room.message", {
        msgtype: "m.text",
        body: `* ${body}`,
        "m.new_content": { msgtype: "m.text", body },
        "m.relates_to": { rel_type: "m.replace", event_id: target },
      });
    const off = await start([{ room: roomId, users: [alice], respond: "all" }]);
    const first = hs.sendText(roomId, alice, "what shuold I read");
    edit(first.event_id, "what should I read today?");
    await settle(off, roomId);
    expect(texts(off)).toEqual(["what shuold I read"]);
    for (const r of running.splice(0)) await r.stop();

    const on = await start([{ room: roomId, users: [alice], respond: "all" }], {
      reask: true,
      windowSeconds: 1,
    });
    const second = hs.sendText(roomId, alice, "compare my sweeep");
    const fixed = edit(second.event_id, "compare my sweep");
    await settle(on, roomId);
    expect(texts(on)).toEqual(["compare my sweeep", "compare my sweep"]);
    expect(on.events.at(-1)!.eventId).toBe(`mx:${fixed.event_id}`);
    const late = hs.sendText(roomId, alice, "list my runz");
    // The window is judged by the server's timestamps: the edit is stamped past it, not waited for.
    hs.rooms.clockSkew.set(alice, 1200);
    edit(late.event_id, "list my runs");
    hs.rooms.clockSkew.delete(alice);
    await settle(on, roomId);
    expect(texts(on).slice(2)).toEqual(["list my runz"]);
    // An edit of someone else's message is no edit of it.
    const mallory = hs.registerUser("mallory").userId;
    hs.joinAs(roomId, mallory);
    hs.send(roomId, mallory, "m.room.message", {
      msgtype: "m.text",
      body: "* hijacked",
      "m.new_content": { msgtype: "m.text", body: "hijacked" },
      "m.relates_to": { rel_type: "m.replace", event_id: second.event_id },
    });
    await settle(on, roomId);
    expect(texts(on)).not.toContain("hijacked");
  });
});
