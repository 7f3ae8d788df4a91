import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { newSession } from "../../src/sessions/session.js";
import { RedisSessionStore } from "../../src/sessions/session-store.js";
import { testRedis, type TestRedis } from "../support/redis.js";

describe("RedisSessionStore on a real Redis", () => {
  let t: TestRedis;
  let store: RedisSessionStore;
  beforeAll(async () => {
    t = await testRedis();
    store = new RedisSessionStore(t.redis, t.keys, { idleSeconds: 60, historyTurns: 2 }, silentLogger());
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("starts a new session, then reads back exactly what a turn committed", async () => {
    const { session, history } = await store.load("shell:a", "feed");
    expect(history).toEqual([]);
    session.enabled = ["feed.list"];
    await store.commit("shell:a", "e1", {
      session,
      append: [{ role: "user", text: "hi", at: 1 }],
      outcome: { reply: { blocks: [{ type: "text", text: "hello" }], options: [] } },
    });
    const again = await store.load("shell:a", "feed");
    expect(again.session).toEqual(session);
    expect(again.history).toEqual([{ role: "user", text: "hi", at: 1 }]);
    expect(await store.outcome("shell:a", "e1")).toMatchObject({ reply: { blocks: [{ text: "hello" }] } });
  });

  it("caps the history and expires idle sessions", async () => {
    const session = newSession("feed");
    const append = Array.from({ length: 10 }, (_, i) => ({ role: "user" as const, text: `m${i}`, at: i }));
    await store.commit("shell:b", "e1", { session, append, outcome: { reply: null } });
    const { history } = await store.load("shell:b", "feed");
    expect(history.map((h) => h.text)).toEqual(["m6", "m7", "m8", "m9"]);
    const ttl = await t.redis.ttl(t.keys.session("shell:b"));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it("keeps one room's keys in one cluster slot (its shard's hash tag)", () => {
    const room = "telegram:1:2";
    const tags = [t.keys.session(room), t.keys.history(room), t.keys.inbox(room), t.keys.lease(room)].map(
      (k) => /\{([^}]*)\}/.exec(k)![1],
    );
    expect(new Set(tags)).toEqual(new Set([t.keys.tag(t.keys.shardOf(room))]));
  });

  it("starts anew when the record in Redis is unreadable, instead of crashing", async () => {
    await t.redis.set(t.keys.session("shell:c"), '{"conversationId": 7}');
    const { session } = await store.load("shell:c", "feed");
    expect(typeof session.conversationId).toBe("string");
  });

  it("starts anew when the room was bound to another namespace", async () => {
    await store.commit("shell:d", "e1", {
      session: newSession("feed"),
      append: [],
      outcome: { reply: null },
    });
    const { session } = await store.load("shell:d", "runs");
    expect(session.namespace).toBe("runs");
  });
});
