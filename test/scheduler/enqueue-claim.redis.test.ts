import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { demoNamespaces } from "../support/spine.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { slowRedis, type SlowRedis } from "../support/slow-redis.js";
import { TestRooms } from "../support/test-room.js";

/** Every request to Redis arrives this much later: a Redis in another zone, where round trips are what a person waits for. */
// Long enough that a busy box's scheduling noise cannot pass for a second round trip.
const DELAY_MS = 250;

describe("a message for an idle room", () => {
  let db: TestRedis;
  let proxy: SlowRedis;
  let runtime: Runtime;
  const rooms = new TestRooms("feed");

  beforeAll(async () => {
    db = await testRedis();
    proxy = await slowRedis(db.url, DELAY_MS);
    runtime = await startRuntime({
      config: demoNamespaces().config,
      redisUrl: proxy.url,
      prefix: db.prefix,
      log: silentLogger(),
      platforms: [rooms.factory()],
    });
  });
  afterAll(async () => {
    await runtime?.stop();
    proxy.close();
    await db.cleanup();
  });

  it("is taken by this process's worker in the call that queues it: one round trip to Redis before the namespace", async () => {
    // Warm: the namespace child started and its tools listed, the scripts loaded.
    await rooms.ask("warm", "/help");
    const waits: number[] = [];
    for (const name of ["a", "b", "c", "d", "e"]) {
      const t0 = Date.now();
      const done = await rooms.ask(name, "what should I read today?");
      expect(done.text).toContain("Today's digest");
      waits.push(done.at - t0);
    }
    // Queue and claim together take one round trip; a claim of its own would add a second
    // to every message. A busy box only adds time, so the fastest of the five is the
    // measure: it fails on two round trips and does not on a stalled scheduler.
    expect(Math.min(...waits)).toBeLessThan(2 * DELAY_MS);
  });
});
