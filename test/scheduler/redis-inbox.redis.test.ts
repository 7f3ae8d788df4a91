import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisInbox } from "../../src/scheduler/redis-inbox.js";
import { SchedulerScripts } from "../../src/scheduler/scheduler-scripts.js";
import { ReplicaWaitError, type Durability } from "../../src/scheduler/durable-write.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { eventually } from "../support/wait.js";

let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => db.cleanup());

/** Waits for one replica (there is none) on the first write, then for none: a failover, made deterministic. */
function firstWriteUnacknowledged(): Durability {
  let first = true;
  return {
    timeoutMs: 10,
    required: async () => {
      const replicas = first ? 1 : 0;
      first = false;
      return { node: "master", replicas };
    },
    observe: () => undefined,
  };
}

const event = (room: string, eventId: string) => ({
  eventId,
  namespace: "echo",
  platform: "telegram" as const,
  receivedAt: Date.now(),
  room,
  sender: { id: "tg:42", name: "u", allowed: true },
  addressed: "direct" as const,
  origin: {
    platform: "telegram" as const,
    botId: 1,
    chatId: 42,
    messageId: 7,
    chatType: "private" as const,
    userId: 42,
  },
  kind: "message" as const,
  text: "hello",
});

describe("RedisInbox", () => {
  it("an enqueue applied but not acknowledged is queued once, and its retry wakes a worker for the room", async () => {
    const inbox = new RedisInbox(new SchedulerScripts(db.redis, db.keys, firstWriteUnacknowledged()), 60_000);
    const room = "telegram:1:42";
    const lane = "telegram";
    await db.redis.del(db.schedulerKeys.wake(lane));
    await expect(inbox.enqueue(event(room, "e1"))).rejects.toBeInstanceOf(ReplicaWaitError);
    // The first attempt made the room pending but nobody was woken: the retry does it.
    expect(await db.redis.llen(db.schedulerKeys.wake(lane))).toBe(0);
    expect(await inbox.enqueue(event(room, "e1"))).toBe(false);
    expect(await db.redis.llen(db.schedulerKeys.inbox(room))).toBe(1);
    await eventually(async () =>
      expect(await db.redis.lrange(db.schedulerKeys.wake(lane), 0, -1)).toEqual([room]),
    );
  });
});
