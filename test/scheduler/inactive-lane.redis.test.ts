import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { waitFor } from "../support/wait.js";

describe("a lane served only while the process says so (LaneSpec.active)", () => {
  let redis: TestRedis;
  let runtime: Runtime;
  let serving = false;
  /** How often the worker has asked whether it serves the lane. */
  let looks = 0;
  const rooms = new TestRooms("feed");
  beforeAll(async () => {
    redis = await testRedis();
    const factory = rooms.factory();
    runtime = await startRuntime({
      config: demoNamespaces().config,
      redisUrl: redis.url,
      prefix: redis.prefix,
      log: silentLogger(),
      platforms: [
        (deps) => ({
          ...factory(deps),
          lanes: [
            {
              name: "telegram",
              active: () => {
                looks += 1;
                return serving;
              },
            },
          ],
        }),
      ],
    });
  });
  afterAll(async () => {
    await runtime.stop();
    await redis.cleanup();
  });

  it("takes none of the lane's turns while inactive, and what waited once active", async () => {
    const asked = await rooms.say("owner-only", "/status");
    // The worker has looked at the lane again and again since, and left it alone.
    const from = looks;
    await waitFor(() => looks >= from + 4, undefined, "the worker looking at the lane");
    expect(rooms.delivered.map((d) => d.event.eventId)).not.toContain(asked);
    expect(await redis.redis.llen(redis.schedulerKeys.inbox(TestRooms.room("owner-only")))).toBe(1);
    serving = true;
    await rooms.reply(asked);
  });
});
