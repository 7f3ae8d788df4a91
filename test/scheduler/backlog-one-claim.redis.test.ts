import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";

/** Slow enough that the messages after the first queue behind it: a backlog. */
const SLOW_MS = 150;
const MESSAGES = 12;

describe("a room's backlog", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine({ env: { DEMO_SLOW_MS: String(SLOW_MS) } });
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("is answered in arrival order under one claim: each turn's finish hands its holder the next", async () => {
    const lease = spine.redis.schedulerKeys.lease(TestRooms.room("backlog"));
    // Every write of the room's lease, inside scripts too (MONITOR shows a script's own
    // commands): a claim sets a new token, a renewal the same one again.
    const monitor: Redis = await spine.redis.redis.monitor();
    // Lines of MONITOR still in the socket when it is closed reach ioredis after it left
    // monitoring, which it reports as an error event ("Command queue state error"): not the test's.
    monitor.on("error", () => undefined);
    const tokens = new Set<string>();
    monitor.on("monitor", (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === "set" && args[1] === lease) tokens.add(args[2]!);
    });
    const ids: string[] = [];
    for (let i = 1; i <= MESSAGES; i += 1)
      ids.push(await spine.rooms.say("backlog", i % 2 ? "/status" : "/help"));
    await Promise.all(ids.map((id) => spine.rooms.reply(id)));
    monitor.disconnect();
    const order = spine.rooms.delivered
      .filter((d) => ids.includes(d.event.eventId))
      .map((d) => d.event.eventId);
    expect(order).toEqual(ids);
    expect(tokens.size).toBe(1);
  });
});
