import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";

describe("a lane served only while the process says so (LaneSpec.active)", () => {
  let redis: TestRedis;
  let runtime: Runtime;
  let serving = false;
  const rooms = new TestRooms("feed");
  beforeAll(async () => {
    redis = await testRedis();
    const factory = rooms.factory();
    runtime = await startRuntime({
      config: demoNamespaces().config,
      redisUrl: redis.url,
      prefix: redis.prefix,
      log: silentLogger(),
      platforms: [(deps) => ({ ...factory(deps), lanes: [{ name: "telegram", active: () => serving }] })],
    });
  });
  afterAll(async () => {
    await runtime.stop();
    await redis.cleanup();
  });

  it("takes none of the lane's turns while inactive, and what waited once active", async () => {
    const asked = await rooms.say("owner-only", "/status");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(rooms.delivered.map((d) => d.event.eventId)).not.toContain(asked);
    const activatedAt = Date.now();
    serving = true;
    await rooms.reply(asked);
    expect(Date.now() - activatedAt).toBeLessThan(2_000);
  });
});
