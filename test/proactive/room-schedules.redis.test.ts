import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { demoNamespaces, startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { staysFalse, waitFor } from "../support/wait.js";

// /schedule and /mute in a room, through the real inbox, queue, bullmq and worker.

let spine: Spine;
// A numeric name: a proactive turn builds its origin from the room key, as for a real chat.
const ROOM = "4242";

const fired = () =>
  spine.rooms.delivered.filter((d) => d.event.kind === "proactive" && d.event.room.endsWith(ROOM));
/** Proactive turns the mute holds for the room, as Redis has them. */
const held = () => spine.runtime.proactive!.mutes.held(TestRooms.room(ROOM));

beforeAll(async () => {
  const demo = demoNamespaces({}, ["feed"]);
  spine = await startSpine({
    config: ConfigSchema.parse({
      namespaces: demo.config.namespaces,
      proactive: { minEverySeconds: 1, roomSchedules: 2 },
    }),
    callLog: demo.callLog,
  });
});

afterAll(async () => {
  await spine.stop();
});

describe("/schedule in a room", () => {
  it("adds a schedule that fires as marked turns, lists it, and refuses what it cannot read", async () => {
    const added = await spine.rooms.ask(ROOM, "/schedule add every 2s what should I read today?");
    expect(added.text).toMatch(/^Scheduled #1: every 2s — what should I read today\?\nNext: .+ UTC\./);
    await waitFor(() => fired().length >= 2, 15_000, "two fires");
    expect(fired()[0]!.text).toMatch(/^⏰ Scheduled ask "every 2s" \(/);
    expect(fired()[0]!.text).toContain("digest");
    const list = await spine.rooms.ask(ROOM, "/schedule list");
    expect(list.text).toMatch(/^Schedules of this room:\n1\. every 2s — what should I read today\? \(next: /);
    expect((await spine.rooms.ask(ROOM, "/schedule add every 2x hello")).text).toBe(
      '"2x" is not an interval like 30m, 2h or 1h30m.',
    );
    expect((await spine.rooms.ask(ROOM, "/schedule add hello there")).text).toContain("Usage: /schedule add");
    expect((await spine.rooms.ask(ROOM, "/schedule add 0 8 * * 1-5 tz=Mars/Base hi")).text).toBe(
      '"Mars/Base" is not a time zone (e.g. Europe/Berlin).',
    );
    expect((await spine.rooms.ask(ROOM, "/schedule remove 7")).text).toBe(
      "There is no schedule 7; choose 1 to 1 (see /schedule list).",
    );
  });

  it("holds proactive posts while muted (not answers to people) and delivers them when the mute ends", async () => {
    const muted = await spine.rooms.ask(ROOM, "/mute 1h");
    expect(muted.text).toMatch(/^Muted until .+ UTC/);
    // The first fire the mute holds: from then on nothing reaches the room until it ends.
    await waitFor(async () => (await held()) >= 1, 15_000, "a held fire");
    const before = fired().length;
    await waitFor(
      async () => {
        expect(fired().length, "a proactive post delivered while muted").toBe(before);
        return (await held()) >= 2;
      },
      15_000,
      "a second held fire",
    );
    // A person is still answered while the room is muted.
    expect((await spine.rooms.ask(ROOM, "what should I read today?")).text).toContain("digest");
    expect(fired().length).toBe(before);
    const state = await spine.rooms.ask(ROOM, "/mute");
    const shown = Number(/(\d+) posts? held/.exec(state.text)?.[1]);
    expect(shown).toBeGreaterThanOrEqual(2);
    const off = await spine.rooms.ask(ROOM, "/mute off");
    // More may have been held since /mute: those past the room's pace follow a second later.
    const [, now, later] =
      /^Mute ended \((\d+) held posts? delivered(?:, (\d+) more at the room's pace)?\)\.$/.exec(off.text)!;
    const released = Number(now) + Number(later ?? 0);
    expect(released).toBeGreaterThanOrEqual(shown);
    await waitFor(() => fired().length >= before + released, 15_000, "the held posts");
    expect(await held()).toBe(0);
  });

  it("keeps to the room's cap, and a removed schedule never fires again", async () => {
    await spine.rooms.ask(ROOM, "/schedule add every 1h anything new?");
    expect((await spine.rooms.ask(ROOM, "/schedule add every 2h more?")).text).toContain(
      "the most it may have (proactive.roomSchedules)",
    );
    const removed = await spine.rooms.ask(ROOM, "/schedule remove 1");
    expect(removed.text).toBe(
      "Removed schedule #1 (every 2s — what should I read today?); it will not fire again.",
    );
    // The room's turns are served in order: a fire queued before the removal is delivered before this answer.
    expect((await spine.rooms.ask(ROOM, "/schedule list")).text).toContain("1. every 1h — anything new?");
    const after = fired().length;
    await staysFalse(() => fired().length > after, 4500, "a fire of the removed schedule (every 2s)");
  });
});
