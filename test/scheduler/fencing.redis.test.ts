import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callsIn, startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { eventually, waitFor } from "../support/wait.js";

describe("fenced leases", () => {
  let spine: Spine;
  const capture = capturingLogger();
  // While this file exists the demo's asks wait: a call is held open until the test has
  // changed what the worker must find when it returns.
  const dir = mkdtempSync(join(tmpdir(), "rg-fencing-"));
  const hold = join(dir, "hold");
  beforeAll(async () => {
    spine = await startSpine({ env: { DEMO_HOLD_FILE: hold }, log: capture.log });
  });
  afterAll(async () => {
    await spine.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const logged = (room: string, msg: string) =>
    capture.lines().some((l) => l.room === room && String(l.msg).startsWith(msg));

  const asksFor = (text: string) =>
    callsIn(spine.callLog).filter((c) => c.startsWith("feed.ask") && c.includes(text));

  it("a lease deleted mid-turn (what a Redis outage leaves) neither asks twice nor answers twice", async () => {
    const { redis, schedulerKeys: keys } = spine.redis;
    const room = TestRooms.room("deleted-lease");
    writeFileSync(hold, "");
    const id = await spine.rooms.say("deleted-lease", "what should I read today? (deleted)");
    await eventually(() => expect(asksFor("(deleted)")).toHaveLength(1));
    await redis.del(keys.lease(room));
    // A new event while the lease key is gone must not make the room claimable by another worker.
    const next = await spine.rooms.say("deleted-lease", "/status");
    rmSync(hold);
    await spine.rooms.reply(id);
    await spine.rooms.reply(next);
    expect(asksFor("(deleted)")).toHaveLength(1);
    expect(spine.rooms.delivered.filter((d) => d.event.eventId === id)).toHaveLength(1);
  });

  it("a worker whose lease was taken stops before any side effect; the new holder answers once", async () => {
    const { redis, schedulerKeys: keys } = spine.redis;
    const room = TestRooms.room("stolen-lease");
    writeFileSync(hold, "");
    const id = await spine.rooms.say("stolen-lease", "what should I read today? (stolen)");
    await eventually(() => expect(asksFor("(stolen)")).toHaveLength(1));
    // Another worker holds the room now (as after this one's lease ran out).
    await redis.set(keys.lease(room), "thief", "PX", 60_000);
    await redis.zadd(keys.laneShard("telegram", keys.shardOf(room)).running, Date.now() + 60_000, room);
    // A renewal finds the room taken while the call is out; then the call returns and
    // the turn stops there.
    await waitFor(
      () => logged(room, "room lease lost; its turn stops"),
      undefined,
      "the renewal finding it taken",
    );
    rmSync(hold);
    await waitFor(() => logged(room, "room lease lost mid-turn"), undefined, "the turn stopping");
    expect(spine.rooms.delivered.filter((d) => d.event.eventId === id)).toHaveLength(0);
    expect(await redis.hget(keys.turn(room), "outcome")).toBeNull();
    // The thief dies: its lease lapses and the room is taken over.
    await redis.del(keys.lease(room));
    await redis.zadd(keys.laneShard("telegram", keys.shardOf(room)).running, Date.now() - 1, room);
    await spine.rooms.reply(id);
    await waitFor(() => spine.redis.drained(room), undefined, "the room drained");
    expect(spine.rooms.delivered.filter((d) => d.event.eventId === id)).toHaveLength(1);
  });
});
