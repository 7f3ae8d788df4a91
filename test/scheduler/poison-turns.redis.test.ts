import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { DeadLetters } from "../../src/scheduler/dead-letters.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TestRooms } from "../support/test-room.js";
import { eventually } from "../support/wait.js";

/**
 * Turns that kill what runs them: a message that crashes the namespace child every
 * time, and a turn whose computation was cut short by its process dying again and
 * again. Each is set aside with one line to its sender; nobody else gets an error.
 */
describe("poison turns", () => {
  let db: TestRedis;
  let runtime: Runtime;
  const rooms = new TestRooms("echo");
  beforeAll(async () => {
    db = await testRedis();
    const config = ConfigSchema.parse({
      namespaces: {
        echo: { command: [process.execPath, "--import", "tsx", "bench/support/echo-server.ts"] },
      },
    });
    runtime = await startRuntime({
      config,
      redisUrl: db.url,
      prefix: db.prefix,
      log: silentLogger(),
      platforms: [rooms.factory()],
    });
  });
  afterAll(async () => {
    await runtime.stop(0);
    await db.cleanup();
  });

  it("sets aside a message that crashed the namespace twice; the other rooms wait out the restart and get their answers", async () => {
    await rooms.ask("warm", "hello");
    const poison = await rooms.say("poison", "crash");
    // Right behind it, while the child is down and backing off: these wait, they do not fail.
    const others = await Promise.all(
      Array.from({ length: 6 }, (_, i) => rooms.say(`bystander-${i}`, `question ${i}`)),
    );
    const quarantined = await rooms.reply(poison);
    expect(quarantined.text).toMatch(/^This message made echo stop twice, so it was set aside/);
    for (const [i, id] of others.entries()) expect((await rooms.reply(id)).text).toBe(`echo: question ${i}`);
    const letters = await new DeadLetters(db.redis, db.scheduler).list();
    expect(letters).toEqual([
      expect.objectContaining({
        room: TestRooms.room("poison"),
        reason: expect.stringMatching(/^quarantined: its message crashed the namespace twice/),
      }),
    ]);
    // The room goes on with its next message.
    expect((await rooms.ask("poison", "and now?")).text).toBe("echo: and now?");
  }, 30_000);

  it("sets aside a turn whose computation was cut short by its worker dying, instead of crash-looping", async () => {
    const room = TestRooms.room("deadly");
    // What three workers killed in the middle of this turn's computation leave in its record.
    await db.redis.hset(db.schedulerKeys.turn(room), "computing", "3");
    const id = await rooms.say("deadly", "an oversized reply, say");
    const line = await rooms.reply(id);
    expect(line.text).toMatch(/^This message was set aside: working on it stopped the worker more than once/);
    await eventually(async () => {
      const letters = await new DeadLetters(db.redis, db.scheduler).list();
      expect(letters.map((l) => l.reason)).toContainEqual(
        expect.stringMatching(/^quarantined: its computation was cut short 3 times/),
      );
    });
  }, 30_000);
});
