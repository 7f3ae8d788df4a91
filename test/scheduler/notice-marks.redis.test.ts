import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoticeMarks } from "../../src/scheduler/notice-marks.js";
import { NO_WAIT } from "../../src/scheduler/durable-write.js";
import { testRedis, type TestRedis } from "../support/redis.js";

/**
 * The receivers' marks that their notices sent without a slot are in the send windows,
 * against a real Redis: who the first bookings after an outage wait for, and a mark that
 * Redis runs late (sent before an outage, run after it) not taken.
 */
describe("notice marks", () => {
  let db: TestRedis;
  let marks: NoticeMarks;
  beforeAll(async () => {
    db = await testRedis();
    marks = new NoticeMarks(db.redis, db.schedulerKeys, NO_WAIT);
  });
  afterAll(() => db.cleanup());

  const redisNow = async () => {
    const [seconds, micros] = await db.redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  it("waits for a receiver that marked before the outage began, until it marks again", async () => {
    const group = `g:${randomUUID()}`;
    await marks.mark(group, "receiver-a");
    await marks.mark(group, "receiver-b");
    const outageFrom = Date.now() + 5;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await marks.pending(group, outageFrom)).toBe(2);
    await marks.mark(group, "receiver-a");
    expect(await marks.pending(group, outageFrom)).toBe(1);
    await marks.mark(group, "receiver-b");
    expect(await marks.pending(group, outageFrom)).toBe(0);
  });

  it("does not wait for a receiver whose last mark came long before the outage (gone)", async () => {
    const group = `g:${randomUUID()}`;
    await db.redis.zadd(db.schedulerKeys.noticeMarks(group), (await redisNow()) - 60_000, "gone");
    await marks.mark(group, "running");
    const since = Date.now() + 5;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await marks.pending(group, since)).toBe(1);
  });

  it("does not take a mark Redis runs after its deadline", async () => {
    const group = `g:${randomUUID()}`;
    const first = await marks.mark(group, "receiver");
    expect(first.taken).toBe(true);
    const late = await marks.mark(group, "receiver", first.now - 1);
    expect(late.taken).toBe(false);
    expect(Number(await db.redis.zscore(db.schedulerKeys.noticeMarks(group), "receiver"))).toBe(first.now);
  });

  it("a probe is a write that adds nothing", async () => {
    const group = `g:${randomUUID()}`;
    await marks.probe(group);
    expect(await db.redis.exists(db.schedulerKeys.noticeMarks(group))).toBe(0);
    await marks.mark(group, "receiver");
    await marks.probe(group);
    expect(await db.redis.zrange(db.schedulerKeys.noticeMarks(group), 0, -1)).toEqual(["receiver"]);
  });
});
