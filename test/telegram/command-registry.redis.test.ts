import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/log.js";
import { COMMANDS } from "../../src/engine/commands/index.js";
import { registerCommands } from "../../src/telegram/command-registry.js";
import { createTelegramBot } from "../../src/telegram/telegram-bot.js";
import { testRedis, type TestRedis } from "../support/redis.js";
import { TelegramApiStandin } from "../support/telegram-api-standin.js";

let standin: TelegramApiStandin;
let db: TestRedis;

beforeAll(async () => {
  standin = await TelegramApiStandin.start();
});
afterAll(async () => standin.close());
beforeEach(async () => {
  db = await testRedis();
});
afterEach(async () => db.cleanup());

describe("registerCommands", () => {
  it("calls setMyCommands only when the command list changed since the last start", async () => {
    const bot = standin.addBot();
    const api = createTelegramBot(bot.token, standin.url).api;
    const register = () => registerCommands(api, bot.id, db.redis, db.keys, silentLogger());
    expect(await register()).toBe(true);
    expect(await register()).toBe(false);
    expect(standin.callsTo("setMyCommands", bot.id)).toHaveLength(1);
    // The menu follows the one command list: everything but /start, which Telegram shows as a button.
    expect(standin.commands(bot.token)).toEqual(
      COMMANDS.filter((c) => c.name !== "start").map(({ name, description }) => ({
        command: name,
        description,
      })),
    );
    expect(standin.commands(bot.token)?.map((c) => c.command)).toContain("new");
    await db.redis.set(db.keys.telegramCommands(bot.id), "hash of an older list");
    expect(await register()).toBe(true);
    expect(standin.callsTo("setMyCommands", bot.id)).toHaveLength(2);
  });

  it("does not keep a bot from starting when registration fails", async () => {
    const bot = standin.addBot();
    standin.inject("setMyCommands", { status: 400, description: "BOT_COMMAND_INVALID" });
    const api = createTelegramBot(bot.token, standin.url).api;
    expect(await registerCommands(api, bot.id, db.redis, db.keys, silentLogger())).toBe(false);
    expect(await db.redis.get(db.keys.telegramCommands(bot.id))).toBeNull();
  });
});
