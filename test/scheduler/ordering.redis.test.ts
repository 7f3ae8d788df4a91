import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSpine, type Spine } from "../support/spine.js";

const SLOW_MS = 700;

describe("per-room order and cross-room parallelism", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({ env: { DEMO_SLOW_MS: String(SLOW_MS) } });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("answers two messages to one room in order while another room proceeds in parallel", async () => {
    const t0 = Date.now();
    const a1 = await spine.rooms.say("room-a", "what should I read today?");
    const a2 = await spine.rooms.say("room-a", "show me the feed");
    const b1 = await spine.rooms.say("room-b", "what should I read today?");
    const [ra1, ra2, rb1] = await Promise.all([a1, a2, b1].map((id) => spine.rooms.reply(id)));
    // One room's turns run one at a time, in arrival order.
    expect(ra1!.seq).toBeLessThan(ra2!.seq);
    expect(ra2!.at - ra1!.at).toBeGreaterThanOrEqual(SLOW_MS - 50);
    expect(ra1!.text).toContain("Today's digest");
    expect(ra2!.text).toContain("Did you mean");
    // Room b did not wait for room a's two slow turns.
    expect(rb1!.at - t0).toBeLessThan(ra2!.at - t0);
    const order = spine.rooms.delivered.map((d) => d.event.eventId);
    expect(order.indexOf(a1)).toBeLessThan(order.indexOf(a2));
  });

  it("keeps arrival order for a burst of messages to one room", async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 5; i += 1) ids.push(await spine.rooms.say("burst", i % 2 ? "/status" : "/help"));
    await Promise.all(ids.map((id) => spine.rooms.reply(id)));
    const order = spine.rooms.delivered
      .filter((d) => ids.includes(d.event.eventId))
      .map((d) => d.event.eventId);
    expect(order).toEqual(ids);
  });
});
