import { afterAll, beforeAll, expect, it } from "vitest";
import { runScript } from "../../src/scheduler/lua-script.js";
import { SCHEDULER_SCRIPTS } from "../../src/scheduler/scheduler-declarations.js";
import { capturingLogger } from "../support/telegram-fixtures.js";
import { testRedis, type TestRedis } from "../support/redis.js";

/**
 * A script that fails in Redis is logged by its name and Redis' error, not with the
 * command ioredis sent: on a connection's first call that is an EVAL carrying the
 * script's whole source (kilobytes of Lua in one error line).
 */
let db: TestRedis;
beforeAll(async () => {
  db = await testRedis();
});
afterAll(async () => db.cleanup());

it("logs a failing script's name and Redis' message, without its source", async () => {
  // A connection of its own: its first call of the script goes as EVAL with the source.
  const redis = db.connection.create({ name: "script errors" });
  const script = SCHEDULER_SCRIPTS.renewLeases;
  const running = db.schedulerKeys.laneShard("telegram", 0).running;
  // A table the script cannot walk: Redis answers with a Lua runtime error.
  const bad = { leaseMs: 1000, leases: "not a list" } as unknown as { leaseMs: number; leases: [] };
  const err = await runScript(redis, script, { running }, bad).catch((e: unknown) => e);
  redis.disconnect();
  const { log, lines } = capturingLogger();
  log.error({ err }, "lease renewal failed");
  const [line] = lines();
  const text = JSON.stringify(line);
  expect(text).toContain(`"command":{"name":"${script.name}"}`);
  expect(text).toMatch(/user_script|ipairs|table expected/);
  expect(text).not.toContain("redis.call");
  expect(text.length).toBeLessThan(2000);
});
