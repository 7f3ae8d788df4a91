import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SendWindow } from "../../src/core/adapter.js";
import { silentLogger } from "../../src/core/log.js";
import { UnbookedNotices } from "../../src/edge/unbooked-notices.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { behindProxy, type HeldProxy } from "../support/held-proxy.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

/**
 * Outage notices inside the send windows, against a real Redis: a notice takes its slot
 * like any send when the windows answer, and one sent while Redis does not answer is
 * recorded in them once Redis answers again (at its answer time when Redis refused it;
 * a record stalled on the way lands later, which only makes the next send wait longer).
 */
describe("outage notices in the send windows", () => {
  let db: TestRedis;
  let proxy: HeldProxy;
  let through: Redis;
  let limiter: RedisRateLimiter;
  beforeAll(async () => {
    db = await testRedis();
    const behind = await behindProxy(db.url);
    proxy = behind.proxy;
    through = new Redis(behind.url, { maxRetriesPerRequest: null });
    limiter = new RedisRateLimiter(through, db.schedulerKeys);
  });
  afterAll(async () => {
    proxy.release();
    through.disconnect();
    proxy.close();
    await db.cleanup();
  });

  const redisNow = async () => {
    const [seconds, micros] = await db.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  const window = (name: string, max: number, windowMs: number): SendWindow & { key: string } => {
    const group = `test:${randomUUID()}`;
    return { group, scope: name, key: db.schedulerKeys.rate(group, name), max, windowMs };
  };
  const notices = () => new UnbookedNotices(limiter, silentLogger(), "test", "test");

  it("waits for a slot of a full window and counts in it, like any send", async () => {
    const bot = window("bot", 2, 1000);
    // Read before the bookings: read after them, a slow return on a loaded box made it
    // late (a run beside the fault rounds: by 30 ms).
    const before = await redisNow();
    for (let i = 0; i < 2; i += 1) expect((await limiter.book([bot], randomUUID(), 20)).waitMs).toBe(0);
    let sentAt = 0;
    await notices().send("room-1", [bot], async () => {
      sentAt = await redisNow();
    });
    // A window after the first send, less the 20 ms a slot may be taken early (SOON_MS).
    expect(sentAt).toBeGreaterThanOrEqual(before + 980);
    const members = await db.redis.zrange(bot.key, 0, -1);
    expect(members.filter((m) => m.startsWith("notice:"))).toHaveLength(1);
  });

  it("sent while Redis does not answer, it is recorded at its answer time once Redis is back", async () => {
    const chat = window("chat", 1, 1150);
    proxy.stall();
    let answeredAt = 0;
    await notices().send("room-2", [chat], async () => {
      answeredAt = Date.now();
    });
    // Sent without a slot after the windows' first answer did not come within a second.
    expect(answeredAt).toBeGreaterThan(0);
    proxy.release();
    await waitFor(
      async () => (await db.redis.zrange(chat.key, 0, -1)).some((m) => m.startsWith("notice:")),
      undefined,
      "the notice in the chat's window",
    );
    // One entry for the notice (its first booking, answered after the stall, is the same member).
    const members = await db.redis.zrange(chat.key, 0, -1);
    expect(members.filter((m) => m.startsWith("notice:"))).toHaveLength(1);
    // The chat's next send waits a second from the notice.
    const next = await limiter.book([chat], randomUUID(), 20);
    expect(next.waitMs).toBeGreaterThan(1000);
  });
});
