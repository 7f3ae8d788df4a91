import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SendWindow } from "../../src/core/adapter.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

/** How far ahead a slot is taken rather than booked (what a turn's gate passes). */
const SOON = 20;

/** The scores of a window's sends (the hold left out), sorted. */
async function entries(db: TestRedis, key: string): Promise<number[]> {
  const flat = await db.redis.zrange(key, 0, -1, "WITHSCORES");
  const out: number[] = [];
  for (let i = 0; i < flat.length; i += 2) if (flat[i] !== "hold") out.push(Number(flat[i + 1]));
  return out.sort((a, b) => a - b);
}

/** The most entries within any span shorter than `windowMs` (what a platform would count). */
function peak(times: number[], windowMs: number): number {
  let best = 0;
  for (let i = 0, j = 0; j < times.length; j += 1) {
    while (times[j]! - times[i]! >= windowMs) i += 1;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

describe("send slots booked on Redis' clock", () => {
  let db: TestRedis;
  let limiter: RedisRateLimiter;
  beforeAll(async () => {
    db = await testRedis();
    limiter = new RedisRateLimiter(db.redis, db.schedulerKeys);
  });
  afterAll(() => db.cleanup());

  /** Redis' clock in ms, the one slots are planned on. */
  const redisNow = async () => {
    const [seconds, micros] = await db.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  /** Waits until Redis' clock reads `ms` or later. */
  const untilRedisTime = (ms: number) =>
    waitFor(async () => (await redisNow()) >= ms, undefined, `Redis' clock at ${ms}`);

  /** A window, with the sorted set the limiter keeps it in (read to count its sends). */
  const window = (name: string, max: number, windowMs: number): SendWindow & { key: string } => {
    const group = `test:${randomUUID()}`;
    return { group, scope: name, key: db.schedulerKeys.rate(group, name), max, windowMs };
  };

  it("takes slots now while a window has room, then books each later sender its own later slot", async () => {
    const bot = window("bot", 5, 1000);
    const now = await Promise.all(Array.from({ length: 5 }, () => limiter.book([bot], randomUUID(), SOON)));
    expect(now.map((r) => r.waitMs)).toEqual([0, 0, 0, 0, 0]);
    for (let i = 0; i < 7; i += 1)
      expect((await limiter.book([bot], randomUUID(), SOON)).waitMs).toBeGreaterThan(0);
    const booked = await entries(db, bot.key);
    expect(booked).toHaveLength(12);
    expect(peak(booked, 1000)).toBe(5);
    // Five more fit one window after the first five, the last two a window after those
    // (the slots' times on Redis' clock, however long each booking took to ask for).
    for (const at of booked.slice(5)) expect(at).toBeGreaterThanOrEqual(booked[0]! + 1000);
    for (const at of booked.slice(10)) expect(at).toBeGreaterThanOrEqual(booked[5]! + 1000);
    // "take" never books: a full window says how long to wait and records nothing.
    expect(await limiter.tryAcquire([bot])).toBeGreaterThan(0);
    expect(await entries(db, bot.key)).toHaveLength(12);
  });

  it("counts a send recorded after the fact (an outage notice) from when it was answered", async () => {
    const chat = window("chat", 1, 1150);
    const group = window("group", 2, 60_150);
    await limiter.recordPast([chat, group], "notice:1", 300);
    // The chat's next send waits a window from the notice's answer, not from now.
    const next = await limiter.book([chat], randomUUID(), SOON);
    expect(next.waitMs).toBeGreaterThan(800);
    // A booking for later is planned 10 ms long (PLAN_MARGIN_MS).
    expect(next.waitMs).toBeLessThanOrEqual(860);
    // Too old for the chat's window, still within the group's minute: counted there only.
    const chat2 = window("chat2", 1, 1150);
    await limiter.recordPast([chat2, group], "notice:2", 5_000);
    expect(await entries(db, chat2.key)).toEqual([]);
    expect(await entries(db, group.key)).toHaveLength(2);
    expect((await limiter.book([group], randomUUID(), SOON)).waitMs).toBeGreaterThan(50_000);
  });

  it("finds a booking again by its member, moving it rather than adding another", async () => {
    const bot = window("bot", 2, 1000);
    await limiter.book([bot], randomUUID(), SOON);
    await limiter.book([bot], randomUUID(), SOON);
    const member = randomUUID();
    const first = await limiter.book([bot], member, SOON);
    expect(first.waitMs).toBeGreaterThan(900);
    const again = await limiter.book([bot], member, SOON, { booked: true });
    expect(Math.abs(again.waitMs - first.waitMs)).toBeLessThan(50);
    expect(await entries(db, bot.key)).toHaveLength(3);
  });

  it("fits a booking between later ones only where no window-long span gets one too many", async () => {
    const chat = window("chat", 1, 1000);
    const bot = window("bot", 3, 1000);
    // Another chat's sends fill the bot's window now; this chat is free.
    for (let i = 0; i < 3; i += 1) await limiter.book([bot, window("chat", 1, 1000)], randomUUID(), SOON);
    const first = await limiter.book([bot, chat], randomUUID(), SOON);
    const second = await limiter.book([bot, chat], randomUUID(), SOON);
    expect(first.waitMs).toBeGreaterThan(900);
    // The chat's second send waits a chat window after its first, not just a bot slot.
    expect(second.waitMs - first.waitMs).toBeGreaterThanOrEqual(990);
    expect(peak(await entries(db, bot.key), 1000)).toBe(3);
    expect(peak(await entries(db, chat.key), 1000)).toBe(1);
  });

  it("keeps every window within its limit for many senders over several windows each", async () => {
    const bot = window("bot", 6, 400);
    const chats = Array.from({ length: 5 }, () => window("chat", 1, 300));
    const group = window("group", 4, 600);
    const all = await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const windows = [bot, chats[i % chats.length]!, ...(i % 3 === 0 ? [group] : [])];
        return limiter.book(windows, randomUUID(), SOON);
      }),
    );
    expect(all.filter((r) => r.waitMs === 0).length).toBeGreaterThan(0);
    expect(peak(await entries(db, bot.key), 400)).toBeLessThanOrEqual(6);
    for (const chat of chats) expect(peak(await entries(db, chat.key), 300)).toBe(1);
    expect(peak(await entries(db, group.key), 600)).toBeLessThanOrEqual(4);
    // Booked close together: 60 sends at 6 per 400 ms need 10 windows (3.6 s), not many more.
    expect(Math.max(...all.map((r) => r.waitMs))).toBeLessThan(5000);
  });

  it("counts a slot from its answer once the request was answered, so later bookings leave room for a slow request", async () => {
    const bot = window("bot", 1, 500);
    const slow = randomUUID();
    const taken = await limiter.book([bot], slow, SOON);
    expect(taken).toMatchObject({ waitMs: 0, tight: true });
    const takenAt = Number(await db.redis.zscore(bot.key, slow));
    // The request is answered at least 200 ms after its slot (on Redis' clock).
    await untilRedisTime(takenAt + 200);
    await limiter.answered([bot], slow);
    const answeredAt = Number(await db.redis.zscore(bot.key, slow));
    expect(answeredAt).toBeGreaterThanOrEqual(takenAt + 200);
    // The next slot is a window after the answer, not after the slot was taken.
    const next = randomUUID();
    await limiter.book([bot], next, SOON);
    expect(Number(await db.redis.zscore(bot.key, next))).toBeGreaterThanOrEqual(answeredAt + 500);
  });

  it("takes a booking when it comes ahead of later bookers, and a late one only shifts a neighbour a little", async () => {
    // A window of a second: C must come after its slot but before E's is within the 100 ms a
    // booking that has come looks ahead, which leaves a busy box most of a second to do it.
    const WINDOW_MS = 1000;
    const bot = window("bot", 1, WINDOW_MS);
    await limiter.book([bot], randomUUID(), SOON);
    const [c, e] = [randomUUID(), randomUUID()];
    const bookedC = (await limiter.book([bot], c, SOON)).waitMs;
    await limiter.book([bot], e, SOON);
    const plannedC = Number(await db.redis.zscore(bot.key, c));
    const plannedE = Number(await db.redis.zscore(bot.key, e));
    expect(bookedC).toBeGreaterThan(WINDOW_MS - 50);
    // Bookings are planned a window and 10 ms apart (room for the first one's answer).
    expect(plannedE - plannedC).toBe(WINDOW_MS + 10);
    // C comes at least 50 ms late: it leaves at once, not behind E.
    await untilRedisTime(plannedC + 50);
    const late = await limiter.book([bot], c, SOON, { booked: true });
    const leftC = Number(await db.redis.zscore(bot.key, c));
    // (Were C later still, E's slot within 100 ms would rightly be ahead of it.)
    expect(leftC, "C came too late for this check").toBeLessThan(plannedE - 100);
    expect(late.waitMs).toBe(0);
    expect(leftC).toBeGreaterThanOrEqual(plannedC + 50);
    // E, asked when it comes, is moved to a window after C instead.
    await untilRedisTime(plannedE - 10);
    await limiter.book([bot], e, SOON, { booked: true });
    expect(Number(await db.redis.zscore(bot.key, e))).toBeGreaterThanOrEqual(leftC + WINDOW_MS);
    expect(peak(await entries(db, bot.key), WINDOW_MS)).toBe(1);
  });

  it("says a window is tight only from half full on, so raised limits never pay for the answer", async () => {
    const roomy = window("bot", 1_000_000, 1000);
    expect((await limiter.book([roomy], randomUUID(), SOON)).tight).toBe(false);
    const four = window("bot", 4, 1000);
    expect((await limiter.book([four], randomUUID(), SOON)).tight).toBe(false);
    expect((await limiter.book([four], randomUUID(), SOON)).tight).toBe(true);
  });

  it("books nothing before a 429's hold ends", async () => {
    const bot = window("bot", 30, 1000);
    // Judged on Redis' clock: the hold began no earlier than `before`, however slow the asking.
    const before = await redisNow();
    await limiter.hold([bot], 700);
    const id = randomUUID();
    expect((await limiter.book([bot], id, SOON)).waitMs).toBeGreaterThan(0);
    expect(Number(await db.redis.zscore(bot.key, id))).toBeGreaterThanOrEqual(before + 700);
    // The windows live on until the held slot's window has passed.
    expect(Number(await db.redis.call("PEXPIRETIME", bot.key))).toBeGreaterThan(before + 1500);
  });
});
