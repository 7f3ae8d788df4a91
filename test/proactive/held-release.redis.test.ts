import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { RELEASE_BATCH } from "../../src/proactive/room-mutes.js";
import { demoNamespaces, startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { waitFor } from "../support/wait.js";

// Issue 25 (Low): held events were released all at once when a mute ended, so a
// person's message waited behind everything the mute held.

let spine: Spine;
const ROOM = "2525";
const HELD = 30;

const fired = () =>
  spine.rooms.delivered.filter((d) => d.event.kind === "proactive" && d.event.room.endsWith(ROOM));

beforeAll(async () => {
  const demo = demoNamespaces({}, ["feed"]);
  spine = await startSpine({
    config: ConfigSchema.parse({ namespaces: demo.config.namespaces }),
    callLog: demo.callLog,
  });
});

afterAll(async () => {
  await spine.stop();
});

describe("held events after /mute off", () => {
  it("held events are released at the room's pace: a person's message is answered before the 30th post", async () => {
    const room = TestRooms.room(ROOM);
    const proactive = spine.runtime.proactive!;
    expect((await spine.rooms.ask(ROOM, "/mute 1h")).text).toMatch(/^Muted until/);
    for (let i = 0; i < HELD; i++) {
      const put = await proactive.inbox.put({
        eventId: `hook:held:${i}`,
        room,
        namespace: "feed",
        source: { type: "hook", name: "held", at: Date.now() },
        text: `what should I read today? (${i})`,
      });
      expect(put).toBe("held");
    }
    const off = await spine.rooms.ask(ROOM, "/mute off");
    // The /mute off itself is in the room's inbox as it runs: one place fewer for posts.
    const [, now, later] =
      /^Mute ended \((\d+) held posts? delivered, (\d+) more at the room's pace\)\.$/.exec(off.text)!;
    expect(Number(now)).toBeLessThanOrEqual(RELEASE_BATCH);
    expect(Number(now) + Number(later)).toBe(HELD);
    const person = await spine.rooms.ask(ROOM, "what should I read today?");
    expect(person.text).toContain("digest");
    // The person waited behind a few posts, not behind all thirty.
    expect(fired().length).toBeLessThan(HELD);
    let deepest = 0;
    await waitFor(
      async () => {
        deepest = Math.max(deepest, await spine.redis.redis.llen(spine.redis.schedulerKeys.inbox(room)));
        return fired().length >= HELD;
      },
      60_000,
      "every held post",
    );
    expect(deepest).toBeLessThanOrEqual(RELEASE_BATCH + 1);
    expect(new Set(fired().map((d) => d.event.eventId)).size).toBe(HELD);
    expect(await proactive.mutes.held(room)).toBe(0);
  }, 90_000);
});
