import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { waitFor } from "../support/wait.js";

describe("what an idle room leaves in Redis", () => {
  let spine: Spine;
  beforeAll(async () => {
    spine = await startSpine();
  });
  afterAll(async () => {
    await spine.stop();
  });

  it("its session and capped history, plus less than 1 KiB; no per-turn records once delivered", async () => {
    const { redis, schedulerKeys: keys } = spine.redis;
    const room = TestRooms.room("idle");
    for (let i = 0; i < 10; i += 1)
      await spine.rooms.ask("idle", i % 2 ? "/status" : "what should I read today?");
    // The last answer is delivered before its turn is closed: wait for the close.
    await waitFor(() => spine.redis.drained(room), undefined, "the room drained");
    const roomKeys = await redis.keys(`${keys.inbox(room).slice(0, -"inbox".length)}*`);
    const rest = roomKeys.filter((k) => k !== keys.session(room) && k !== keys.history(room));
    let bytes = 0;
    for (const key of rest) bytes += Number(await redis.call("MEMORY", "USAGE", key));
    expect(bytes).toBeLessThan(1024);
    for (const gone of [keys.turn(room), keys.lease(room), keys.inbox(room)])
      expect(await redis.exists(gone)).toBe(0);
    expect(await redis.zscore(keys.laneShard("telegram", keys.shardOf(room)).running, room)).toBeNull();
    expect(await redis.zscore(keys.laneShard("telegram", keys.shardOf(room)).pending, room)).toBeNull();
  });
});
