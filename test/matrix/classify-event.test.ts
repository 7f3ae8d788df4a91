import { describe, expect, it } from "vitest";
import { classifyEvent, isTextMime, stripReplyFallback } from "../../src/matrix/classify-event.js";
import type { RoomEvent } from "../../src/matrix/matrix-events.js";
import { mayInvite } from "../../src/access/rules.js";
import { isAllowed, roomBindings } from "../../src/matrix/room-policy.js";

const BOT = "@bot:example.org";
const context = { botUserId: BOT, maxFileBytes: 100 };

function event(type: string, content: Record<string, unknown>, extra: Partial<RoomEvent> = {}): RoomEvent {
  return { event_id: "$e", type, sender: "@alice:example.org", origin_server_ts: 1, content, ...extra };
}

describe("classifyEvent", () => {
  it("ignores the bot's own events, notices and unknown types, and reads an edit as one", () => {
    const text = { msgtype: "m.text", body: "hi" };
    expect(classifyEvent(event("m.room.message", text, { sender: BOT }), context).type).toBe("ignore");
    expect(classifyEvent(event("m.room.message", { msgtype: "m.notice", body: "beep" }), context).type).toBe(
      "ignore",
    );
    const edit = {
      ...text,
      "m.new_content": text,
      "m.relates_to": { rel_type: "m.replace", event_id: "$x" },
    };
    expect(
      classifyEvent(
        event("m.room.message", { ...edit, "m.new_content": { msgtype: "m.text", body: "hi!" } }),
        context,
      ),
    ).toEqual({
      type: "edit",
      target: "$x",
      text: "hi!",
    });
    expect(classifyEvent(event("m.room.topic", { topic: "t" }, { state_key: "" }), context).type).toBe(
      "ignore",
    );
    expect(classifyEvent(event("m.room.message", { msgtype: "m.location", body: "geo" }), context).type).toBe(
      "ignore",
    );
  });

  it("reads text and emotes, with the reply fallback removed and the reply and thread kept", () => {
    const reply = {
      msgtype: "m.text",
      body: "> <@bot:example.org> 1️⃣ compare\n> 2️⃣ list\n\n2",
      "m.relates_to": { "m.in_reply_to": { event_id: "$offer" } },
    };
    expect(classifyEvent(event("m.room.message", reply), context)).toEqual({
      type: "message",
      text: "2",
      replyTo: "$offer",
    });
    const threaded = {
      msgtype: "m.emote",
      body: "> not a fallback",
      "m.relates_to": {
        rel_type: "m.thread",
        event_id: "$root",
        is_falling_back: true,
        "m.in_reply_to": { event_id: "$last" },
      },
    };
    expect(classifyEvent(event("m.room.message", threaded), context)).toEqual({
      type: "message",
      text: "> not a fallback",
      threadRoot: "$root",
    });
  });

  it("flags encryption in any form", () => {
    expect(classifyEvent(event("m.room.encrypted", { ciphertext: "x" }), context)).toEqual({
      type: "encrypted",
    });
    expect(classifyEvent(event("m.room.encryption", { algorithm: "a" }, { state_key: "" }), context)).toEqual(
      {
        type: "encrypted",
      },
    );
  });

  it("reads keycap annotations only", () => {
    const react = (key: string) =>
      classifyEvent(
        event("m.reaction", { "m.relates_to": { rel_type: "m.annotation", event_id: "$m", key } }),
        context,
      );
    expect(react("2️⃣")).toEqual({ type: "reaction", target: "$m", number: 2 });
    expect(react("🔟")).toEqual({ type: "reaction", target: "$m", number: 10 });
    expect(react("👍").type).toBe("ignore");
  });

  it("takes text files under the cap and rejects the rest with a reason", () => {
    const file = (msgtype: string, mimetype: string, size: number, extra: Record<string, unknown> = {}) =>
      classifyEvent(
        event("m.room.message", {
          msgtype,
          body: "f.txt",
          url: "mxc://s/id",
          info: { mimetype, size },
          ...extra,
        }),
        context,
      );
    expect(file("m.file", "text/plain", 10)).toMatchObject({
      type: "file",
      url: "mxc://s/id",
      name: "f.txt",
    });
    expect(file("m.file", "application/json; charset=utf-8", 10)).toMatchObject({ url: "mxc://s/id" });
    expect(file("m.file", "text/plain", 101)).toMatchObject({
      rejected: expect.stringContaining("100 bytes"),
    });
    expect(file("m.image", "image/png", 10)).toMatchObject({
      rejected: expect.stringContaining("not a text file"),
    });
    expect(file("m.file", "application/pdf", 10)).toMatchObject({
      rejected: expect.stringContaining("not a text"),
    });
    const sent = (file: unknown) =>
      classifyEvent(
        event("m.room.message", {
          msgtype: "m.file",
          body: "e.txt",
          file,
          info: { mimetype: "text/plain", size: 10 },
        }),
        context,
      );
    // A file of an encrypted room: its URL and how to decrypt it come from the `file` object.
    const encryption = { url: "mxc://s/enc", key: { k: "key" }, iv: "iv", hashes: { sha256: "h" }, v: "v2" };
    expect(sent(encryption)).toMatchObject({ url: "mxc://s/enc", encryption });
    expect(sent({})).toMatchObject({ rejected: expect.stringContaining("no readable file") });
  });
});

describe("reply fallback and text types", () => {
  it("strips only a leading `> <@user>` quote", () => {
    expect(stripReplyFallback("> <@a:b> hello\n> more\n\nanswer\n> kept")).toBe("answer\n> kept");
    expect(stripReplyFallback("> quoting myself\n\nanswer")).toBe("> quoting myself\n\nanswer");
  });

  it("knows text media types", () => {
    for (const mime of [
      "text/plain",
      "text/markdown",
      "application/json",
      "application/ld+json",
      "image/svg+xml",
    ]) {
      expect(isTextMime(mime)).toBe(true);
    }
    for (const mime of ["image/png", "application/octet-stream", "application/pdf"])
      expect(isTextMime(mime)).toBe(false);
  });
});

describe("room policy", () => {
  const config = {
    homeserver: "https://hs.example",
    accessToken: "secret-token",
    inviters: [],
    rooms: [
      { room: "!a:x", namespace: "runs", users: ["@alice:x"] },
      { room: "!b:x", namespace: "feed", users: [], powerLevel: 50 },
    ],
  };

  it("lets listed users and users at the room's power level talk", () => {
    const rooms = roomBindings(config);
    const levels = { users: { "@mod:x": 50, "@low:x": 10 }, users_default: 0 };
    expect(isAllowed(rooms.get("!a:x")!, "@alice:x", undefined)).toBe(true);
    expect(isAllowed(rooms.get("!a:x")!, "@mod:x", levels)).toBe(false);
    expect(isAllowed(rooms.get("!b:x")!, "@mod:x", levels)).toBe(true);
    expect(isAllowed(rooms.get("!b:x")!, "@low:x", levels)).toBe(false);
    expect(isAllowed(rooms.get("!b:x")!, "@anyone:x", { users: {}, users_default: 50 })).toBe(true);
  });

  it("takes invites from the room's users by default, from `inviters` when set", () => {
    const own = roomBindings(config);
    expect(mayInvite(own.get("!a:x"), "@alice:x")).toBe(true);
    expect(mayInvite(own.get("!a:x"), "@mallory:x")).toBe(false);
    expect(mayInvite(own.get("!c:x"), "@alice:x")).toBe(false);
    const explicit = roomBindings({ ...config, inviters: ["@ops:x"] });
    expect(mayInvite(explicit.get("!a:x"), "@ops:x")).toBe(true);
    expect(mayInvite(explicit.get("!a:x"), "@alice:x")).toBe(false);
  });
});
