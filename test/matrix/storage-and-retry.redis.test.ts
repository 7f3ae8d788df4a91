import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { historyOf } from "../../src/matrix/history-guard.js";
import { MatrixRequestError } from "../../src/matrix/matrix-errors.js";
import { retryDelay, withMatrixRetry } from "../../src/matrix/matrix-retry.js";
import { RedisStorageProvider } from "../../src/matrix/redis-storage-provider.js";
import { FAST_RETRY } from "../support/matrix-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";

describe("RedisStorageProvider on real Redis", () => {
  let redis: TestRedis;
  beforeEach(async () => {
    redis = await testRedis();
  });
  afterEach(async () => {
    await redis.cleanup();
  });

  it("keeps the sync token, filter and values in one hash, readable by a new instance", async () => {
    const key = redis.keys.matrixStorage("@bot:example.org");
    const first = new RedisStorageProvider(redis.redis, key);
    expect(await first.getSyncToken()).toBeNull();
    expect(await first.getFilter()).toBeNull();
    expect(await first.readValue("missing")).toBeNull();
    await first.setSyncToken("s42");
    await first.setFilter({ id: 7, filter: { room: { timeline: { limit: 50 } } } });
    await first.storeValue("e2ee-notice:!r:x", "1");
    const second = new RedisStorageProvider(redis.redis, key);
    expect(await second.getSyncToken()).toBe("s42");
    expect(await second.getFilter()).toEqual({ id: 7, filter: { room: { timeline: { limit: 50 } } } });
    expect(await second.readValue("e2ee-notice:!r:x")).toBe("1");
    await second.setSyncToken(null);
    expect(await first.getSyncToken()).toBeNull();
    expect(await redis.redis.type(key)).toBe("hash");
  });

  it("calls history the first sync's timeline and what precedes the bot's join, by order not clock", () => {
    const bot = "@bot:x";
    const event = (id: string, ts: number, extra: Record<string, unknown> = {}) => ({
      event_id: id,
      type: "m.room.message",
      sender: "@a:x",
      origin_server_ts: ts,
      content: { msgtype: "m.text", body: id },
      ...extra,
    });
    const join = event("$join", 5, {
      type: "m.room.member",
      state_key: bot,
      sender: bot,
      content: { membership: "join" },
    });
    const sync = (events: unknown[]) => ({ rooms: { join: { "!r:x": { timeline: { events } } } } });
    expect([...historyOf(sync([event("$old", 9e15), event("$older", 1)]), true, bot)]).toEqual([
      "$old",
      "$older",
    ]);
    // After the join, a message is new whatever its sender's clock says.
    const joined = historyOf(sync([event("$before", 9e15), join, event("$after", 1)]), false, bot);
    expect([...joined]).toEqual(["$before", "$join"]);
    expect(historyOf(sync([event("$plain", 1)]), false, bot).size).toBe(0);
  });
});

describe("Matrix retry policy", () => {
  const rateLimited = { statusCode: 429, errcode: "M_LIMIT_EXCEEDED", retryAfterMs: 1234, body: {} };

  it("waits what a 429 asks, backs off on 5xx and network errors, and gives up on other 4xx", () => {
    expect(retryDelay(rateLimited, 0, FAST_RETRY)).toBe(1234);
    expect(
      retryDelay(
        { statusCode: 429, body: { errcode: "M_LIMIT_EXCEEDED", retry_after_ms: 10 } },
        0,
        FAST_RETRY,
      ),
    ).toBe(10);
    expect(retryDelay({ ...rateLimited, retryAfterMs: 60_000 }, 0, FAST_RETRY)).toBeNull();
    expect(retryDelay({ statusCode: 503 }, 0, FAST_RETRY)).toBeGreaterThan(0);
    expect(
      retryDelay(Object.assign(new Error("reset"), { code: "ECONNRESET" }), 0, FAST_RETRY),
    ).toBeGreaterThan(0);
    expect(retryDelay({ statusCode: 403, errcode: "M_FORBIDDEN" }, 0, FAST_RETRY)).toBeNull();
    expect(retryDelay(new Error("bug"), 0, FAST_RETRY)).toBeNull();
  });

  it("throws a MatrixRequestError carrying the cause once attempts run out", async () => {
    let calls = 0;
    const failing = withMatrixRetry(
      "send",
      async () => {
        calls += 1;
        throw { statusCode: 500 };
      },
      silentLogger(),
      FAST_RETRY,
    );
    await expect(failing).rejects.toBeInstanceOf(MatrixRequestError);
    await expect(failing).rejects.toMatchObject({ status: 500, cause: { statusCode: 500 } });
    expect(calls).toBe(FAST_RETRY.attempts);
  });
});
