import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { demoNamespaces, startSpine, type Spine } from "../support/spine.js";

// /schedule and /mute in a room, through the real inbox, queue, bullmq and worker.

let spine: Spine;
// A numeric name: a proactive turn builds its origin from the room key, as for a real chat.
const ROOM = "4242";

const fired = () =>
  spine.rooms.delivered.filter((d) => d.event.kind === "proactive" && d.event.room.endsWith(ROOM));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

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
    await until(() => fired().length >= 2, 15_000, "two fires");
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
    await sleep(300);
    const before = fired().length;
    await sleep(5000);
    // A person is still answered while the room is muted.
    expect((await spine.rooms.ask(ROOM, "what should I read today?")).text).toContain("digest");
    expect(fired().length).toBe(before);
    const state = await spine.rooms.ask(ROOM, "/mute");
    const held = Number(/(\d+) posts? held/.exec(state.text)?.[1]);
    expect(held).toBeGreaterThanOrEqual(2);
    const off = await spine.rooms.ask(ROOM, "/mute off");
    expect(off.text).toMatch(/^Mute ended \(\d+ held posts? delivered\)\.$/);
    await until(() => fired().length >= before + held, 15_000, "the held posts");
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
    await sleep(500);
    const after = fired().length;
    await sleep(5000);
    expect(fired().length).toBe(after);
    expect((await spine.rooms.ask(ROOM, "/schedule list")).text).toContain("1. every 1h — anything new?");
  });
});
