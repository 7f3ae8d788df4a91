import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config.js";
import { silentLogger } from "../../src/core/log.js";
import { SchedulerKeys } from "../../src/scheduler/scheduler-keys.js";
import { newSession } from "../../src/sessions/session.js";
import { RedisSessionStore } from "../../src/scheduler/session-store.js";
import { demoNamespaces, startSpine, type Spine } from "../support/spine.js";
import { TestRooms } from "../support/test-room.js";
import { eventually } from "../support/wait.js";

/**
 * The session record as production writes it: turns run through the real worker, whose
 * fenced Lua step commits session and history; the store parses what Redis then holds.
 */
describe("RedisSessionStore through the worker's commits, on a real Redis", () => {
  let spine: Spine;
  let store: RedisSessionStore;
  beforeAll(async () => {
    const demo = demoNamespaces();
    const config = ConfigSchema.parse({
      namespaces: demo.config.namespaces,
      sessions: { idleSeconds: 60, historyTurns: 2 },
    });
    spine = await startSpine({ config, callLog: demo.callLog });
    store = new RedisSessionStore(spine.redis.redis, spine.redis.keys, config.sessions, silentLogger());
  });
  afterAll(async () => {
    await spine.stop();
  });

  /** What Redis holds for a test room, once the worker's finish has committed its last turn. */
  async function stored(name: string, turns: number, namespace = "feed") {
    return eventually(async () => {
      const found = await read(name, namespace);
      expect(found.session.turns).toBe(turns);
      return found;
    });
  }

  async function read(name: string, namespace: string) {
    const room = TestRooms.room(name);
    const { redis, schedulerKeys: keys } = spine.redis;
    return store.parse(room, namespace, await redis.get(keys.session(room)), await store.history(room));
  }

  it("reads back the session and history a turn committed", async () => {
    await spine.rooms.ask("a", "/tools");
    const d = await spine.rooms.ask("a", "what should I read today?");
    const { session, history } = await stored("a", 2);
    expect(session.enabled).toContain("feed.list");
    const answer = d.outcome.reply!.blocks[0]!;
    expect(history.slice(-2).map((h) => [h.role, h.text])).toEqual([
      ["user", "what should I read today?"],
      ["bot", answer.type === "answer" ? answer.answer : ""],
    ]);
  });

  it("caps the history at historyTurns exchanges and expires idle sessions", async () => {
    for (const n of [1, 2, 3]) await spine.rooms.ask("b", `question ${n}`);
    const { history } = await stored("b", 3);
    expect(history).toHaveLength(4);
    expect(history.filter((h) => h.role === "user").map((h) => h.text)).toEqual(["question 2", "question 3"]);
    const ttl = await spine.redis.redis.ttl(spine.redis.schedulerKeys.session(TestRooms.room("b")));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it("keeps one room's keys in one cluster slot (its shard's hash tag)", () => {
    const keys = new SchedulerKeys("rg");
    const room = "telegram:1:2";
    const tags = [keys.session(room), keys.history(room), keys.inbox(room), keys.lease(room)].map(
      (k) => /\{([^}]*)\}/.exec(k)![1],
    );
    expect(new Set(tags)).toEqual(new Set([keys.tag(keys.shardOf(room))]));
  });

  it("starts anew when the record in Redis is unreadable, and the room still answers", async () => {
    const room = TestRooms.room("c");
    await spine.redis.redis.set(spine.redis.schedulerKeys.session(room), '{"conversationId": 7}');
    const status = await spine.rooms.ask("c", "/status");
    expect(status.text).toMatch(/Conversation: [0-9a-f-]{36}/);
    await stored("c", 1);
  });

  it("starts anew when the room was bound to another namespace", () => {
    const old = JSON.stringify(newSession("feed"));
    const { session, history } = store.parse("shell:d", "runs", old, ['{"role":"user","text":"x","at":1}']);
    expect(session.namespace).toBe("runs");
    expect(history).toEqual([]);
  });

  it("reads a session written when a room had one pending argument: it becomes that person's slot", () => {
    const old = JSON.stringify({
      ...newSession("feed"),
      slots: undefined,
      slot: { tool: "feed.send", args: {}, missing: [{ name: "to" }], question: "", createdAt: 1 },
    });
    const { session } = store.parse("shell:e", "feed", old, []);
    expect(session.slots).toHaveLength(1);
    expect(session.slots[0]!.tool).toBe("feed.send");
  });
});
