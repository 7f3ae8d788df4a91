import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { demoNamespaces } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { waitFor } from "../support/wait.js";

describe("several workers sharing one Redis", () => {
  let redis: TestRedis;
  const runtimes: Runtime[] = [];
  const workers = [new TestRooms("feed"), new TestRooms("feed"), new TestRooms("feed")];

  beforeAll(async () => {
    redis = await testRedis();
    const { config } = demoNamespaces({ DEMO_SLOW_MS: "30" }, ["feed"]);
    for (const rooms of workers) {
      runtimes.push(
        await startRuntime({
          config: { ...config, worker: { concurrency: 4 } },
          redisUrl: redis.url,
          prefix: redis.prefix,
          log: silentLogger(),
          platforms: [rooms.factory()],
        }),
      );
    }
  });
  afterAll(async () => {
    await Promise.all(runtimes.map((r) => r.stop()));
    await redis.cleanup();
  });

  it("answers every message exactly once, each room in arrival order", async () => {
    const sent = new Map<string, string[]>();
    const entry = workers[0]!;
    // More rooms than one process has slots (4): what the receiving process cannot take is shared.
    for (let i = 0; i < 36; i += 1) {
      const room = `multi-${i % 12}`;
      const id = await entry.say(room, i % 3 === 0 ? "what should I read today?" : "/status");
      sent.set(room, [...(sent.get(room) ?? []), id]);
    }
    const all = [...sent.values()].flat();
    const delivered = () => workers.flatMap((w) => w.delivered);
    await waitFor(() => delivered().length >= all.length, 30_000, "every message answered");
    const seen = delivered();
    expect(seen.map((d) => d.event.eventId).sort()).toEqual([...all].sort());
    for (const [room, ids] of sent) {
      const order = seen
        .filter((d) => d.event.room === TestRooms.room(room))
        .sort((a, b) => a.seq - b.seq)
        .map((d) => d.event.eventId);
      expect(order, room).toEqual(ids);
    }
    // The work was shared: more than one worker delivered turns.
    expect(workers.filter((w) => w.delivered.length > 0).length).toBeGreaterThan(1);
  });
});
