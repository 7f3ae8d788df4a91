import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { MatrixSender } from "../../src/matrix/matrix-sender.js";
import { MatrixHomeserverStandin } from "../support/matrix-homeserver-standin.js";
import { deliveryContext, FAST_RETRY, matrixConfig, matrixQuestion } from "../support/matrix-fixtures.js";

const PNG = Buffer.from("89504e470d0a1a0a0000000d4948445200000001", "hex");

describe("Matrix media and progress against the homeserver stand-in", () => {
  let hs: MatrixHomeserverStandin;
  let bot: { userId: string; accessToken: string };
  let alice: string;
  let roomId: string;
  let sender: MatrixSender;
  beforeAll(async () => {
    hs = await MatrixHomeserverStandin.start();
    bot = hs.registerUser("bot");
    alice = hs.registerUser("alice").userId;
    roomId = hs.createRoom(alice, { members: [bot.userId] });
    sender = new MatrixSender({
      config: matrixConfig(hs.url, bot.accessToken, [{ room: roomId }]),
      log: silentLogger(),
      retry: FAST_RETRY,
    });
  });
  afterAll(async () => {
    await hs.close();
  });

  it("uploads an image to the media repository and sends it as m.image, a blob as m.file", async () => {
    const question = hs.sendText(roomId, alice, "/call get-tiny-image");
    await sender.deliver(
      matrixQuestion(roomId, question.event_id, alice),
      {
        reply: {
          blocks: [{ type: "code", text: "Here's the image you requested:" }],
          options: [],
          attachments: [
            { kind: "image", name: "tiny.png", mime: "image/png", data: PNG.toString("base64") },
            { kind: "file", name: "blob.bin", mime: "application/octet-stream", data: "AAEC" },
          ],
        },
      },
      deliveryContext("turn-media"),
    );
    const sent = hs.sentBy(roomId, bot.userId, "m.room.message");
    const image = sent.find((e) => e.content.msgtype === "m.image")!;
    expect(image.content).toMatchObject({
      body: "tiny.png",
      info: { mimetype: "image/png", size: PNG.length },
    });
    expect(hs.mediaAt(String(image.content.url))!.data.equals(PNG)).toBe(true);
    const file = sent.find((e) => e.content.msgtype === "m.file")!;
    expect(hs.mediaAt(String(file.content.url))!.data).toEqual(Buffer.from([0, 1, 2]));
  });

  it("shows progress as one notice edited in place with m.replace, the last edit on done", async () => {
    const question = hs.sendText(roomId, alice, "/call slow");
    const event = matrixQuestion(roomId, question.event_id, alice);
    const before = hs.sentBy(roomId, bot.userId, "m.room.message").length;
    await sender.progress(event, { key: "k1", text: "⏳ slow: 1/3 (33%)", done: false });
    await sender.progress(event, { key: "k1", text: "⏳ slow: 2/3 (67%)", done: false });
    await sender.progress(event, { key: "k1", text: "⏳ slow: 3/3 (100%)", done: false });
    await sender.progress(event, { key: "k1", text: "✓ slow: finished", done: true });
    const sent = hs.sentBy(roomId, bot.userId, "m.room.message").slice(before);
    const [status, ...edits] = sent;
    expect(status!.content).toMatchObject({ msgtype: "m.notice", body: "⏳ slow: 1/3 (33%)" });
    expect(edits.length).toBeGreaterThanOrEqual(1);
    for (const edit of edits) {
      expect(edit.content["m.relates_to"]).toEqual({ rel_type: "m.replace", event_id: status!.event_id });
    }
    expect(edits.at(-1)!.content["m.new_content"]).toEqual({ msgtype: "m.notice", body: "✓ slow: finished" });
    const times = edits.map((e) => e.origin_server_ts);
    expect(times.slice(1).every((t, i) => t - times[i]! >= 1900)).toBe(true);
  });

  it("puts a thread turn's status notice in the thread, its edits following it by m.replace alone", async () => {
    const root = hs.sendText(roomId, alice, "a thread");
    const question = hs.sendText(roomId, alice, "/call slow", { threadRoot: root.event_id });
    const event = matrixQuestion(roomId, question.event_id, alice, { threadRoot: root.event_id });
    const before = hs.sentBy(roomId, bot.userId, "m.room.message").length;
    await sender.progress(event, { key: "k2", text: "⏳ slow: 1/2 (50%)", done: false });
    await sender.progress(event, { key: "k2", text: "✓ slow: finished", done: true });
    const [status, ...edits] = hs.sentBy(roomId, bot.userId, "m.room.message").slice(before);
    expect(status!.content["m.relates_to"]).toMatchObject({ rel_type: "m.thread", event_id: root.event_id });
    expect(edits.at(-1)!.content["m.relates_to"]).toEqual({
      rel_type: "m.replace",
      event_id: status!.event_id,
    });
  });
});
