import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import type { Logger } from "../../src/core/log.js";
import { silentLogger } from "../../src/core/log.js";
import { freePort } from "../../src/sessions/embedded-redis.js";
import { permissionDeps } from "../../src/runtime.js";
import { RedisRateLimiter } from "../../src/scheduler/rate-limiter.js";
import { TelegramStartError } from "../../src/telegram/telegram-errors.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin } from "../support/telegram-api-standin.js";
import { capturingLogger, RecordingInbox, telegramConfig } from "../support/telegram-fixtures.js";
import { waitFor } from "../support/wait.js";

let db: TestRedis;
beforeEach(async () => {
  db = await testRedis();
});
afterEach(async () => db.cleanup());

function platform(config: ReturnType<typeof telegramConfig>, log: Logger = silentLogger()) {
  const deps = {
    config,
    redis: db.redis,
    connection: db.connection,
    keys: db.keys,
    scheduler: db.scheduler,
    inbox: new RecordingInbox(),
    limiter: new RedisRateLimiter(db.redis, db.schedulerKeys),
    log,
    ...permissionDeps(config, db.redis, db.keys),
  };
  return createTelegramPlatform({ polling: { timeoutSeconds: 1, backoffMs: { initial: 50, max: 200 } } })(
    deps,
  );
}

describe("telegramPlatform", () => {
  it("builds nothing without bots, and refuses a bad token, a duplicate bot or webhook mode without a webhook", () => {
    expect(platform(telegramConfig({ apiRoot: "http://127.0.0.1:1", bots: [] }))).toEqual({});
    // A token that is not one is refused by the configuration schema itself.
    expect(() => telegramConfig({ apiRoot: "http://127.0.0.1:1", bots: [{ token: "not-a-token" }] })).toThrow(
      /looks like <bot id>:<secret>/,
    );
    const twice = () =>
      platform(
        telegramConfig({ apiRoot: "http://127.0.0.1:1", bots: [{ token: "12:aa" }, { token: "12:bb" }] }),
      );
    expect(twice).toThrow(ConfigError);
    expect(twice).toThrow(/the same bot \(id 12\) is configured twice/);
    const webhook = () =>
      platform(
        telegramConfig({ apiRoot: "http://127.0.0.1:1", mode: "webhook", bots: [{ token: "12:aa" }] }),
      );
    expect(webhook).toThrow(/telegram\.webhook/);
  });

  it("fails to start with a clear error naming the bot when the Bot API cannot be reached", async () => {
    const token = "123456:secret-token-never-logged";
    const { log, lines } = capturingLogger();
    const receiver = platform(
      telegramConfig({ apiRoot: `http://127.0.0.1:${await freePort()}`, bots: [{ token }] }),
      log,
    ).receiver!;
    const err = await receiver.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TelegramStartError);
    expect((err as TelegramStartError).userText).toMatch(
      /Telegram bot 123456 could not start .*Check its token/,
    );
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain("secret-token-never-logged");
    expect(String((err as Error).cause)).not.toContain("secret-token-never-logged");
    expect(JSON.stringify(lines())).not.toContain("secret-token-never-logged");
  }, 20_000);

  it("logs a lost connection while polling without the token, and keeps retrying", async () => {
    const standin = await TelegramApiStandin.start();
    const bot = standin.addBot();
    const { log, lines } = capturingLogger();
    const receiver = platform(
      telegramConfig({ apiRoot: standin.url, bots: [{ token: bot.token }] }),
      log,
    ).receiver!;
    await receiver.start();
    await standin.close();
    await waitFor(
      () => lines().filter((l) => String(l.msg).includes("getUpdates failed")).length >= 2,
      5000,
      "retries",
    );
    await receiver.stop();
    const secret = bot.token.split(":")[1]!;
    expect(JSON.stringify(lines())).not.toContain(secret);
    expect(lines().find((l) => String(l.msg).includes("getUpdates failed"))).toMatchObject({
      err: { errorClass: "HttpError" },
    });
  });
});
