import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { Config } from "../../src/core/config.js";
import { silentLogger, type Logger } from "../../src/core/log.js";
import { startRuntime, type Runtime } from "../../src/runtime.js";
import type { SenderTiming } from "../../src/telegram/telegram-sender.js";
import { createTelegramPlatform } from "../../src/telegram/telegram-platform.js";
import { testRedis, type TestRedis } from "./redis.js";
import { TelegramApiStandin, type StandinBot } from "./telegram-api-standin.js";
import { telegramConfig } from "./telegram-fixtures.js";

/** Polling for tests: a 1 s long poll, and retries from 50 ms, so a stop or a failure is quick. */
export const FAST_POLLING = { timeoutSeconds: 1, backoffMs: { initial: 50, max: 500 } };

/** What a test file asks of its Telegram world. */
export interface WorldOptions {
  /** The stand-in enforces Telegram's ~1 message/s per chat (and per-group) limits. */
  perChatRate?: boolean;
  username?: string;
  /** BotFather's topic mode for the bot (drafts in private chats need it). */
  topics?: boolean;
  /** `file`: one Redis and bot for the whole file; `test`: fresh ones for each test. */
  fresh?: "file" | "test";
}

/** One roomgate process's options beyond its config. */
export interface ProcessOptions {
  log?: Logger;
  workers?: boolean;
  receivers?: boolean;
  sender?: Partial<SenderTiming>;
}

/**
 * The Telegram setup the adapter and scheduler tests share: a stand-in Bot API (one per
 * file), a real Redis with a random prefix and a bot, and the roomgate processes a test
 * starts against them, each stopped after it (its hooks are registered by `telegramWorld`).
 */
export class TelegramWorld {
  private standinValue: TelegramApiStandin | undefined;
  private dbValue: TestRedis | undefined;
  private botValue: StandinBot | undefined;
  private readonly runtimes: Runtime[] = [];

  constructor(private readonly options: WorldOptions) {}

  get standin(): TelegramApiStandin {
    return this.standinValue!;
  }
  get db(): TestRedis {
    return this.dbValue!;
  }
  get bot(): StandinBot {
    return this.botValue!;
  }

  /** A configuration for the world's bot (apiRoot and token filled in), validated like a file. */
  config(
    input: Omit<Parameters<typeof telegramConfig>[0], "apiRoot" | "bots"> & {
      bot?: Omit<Parameters<typeof telegramConfig>[0]["bots"][number], "token">;
    },
  ): Config {
    const { bot, ...rest } = input;
    return telegramConfig({ ...rest, apiRoot: this.standin.url, bots: [{ token: this.bot.token, ...bot }] });
  }

  /** Starts one roomgate process on the world's Redis; it is stopped after the test (or file). */
  async start(config: Config, options: ProcessOptions = {}): Promise<Runtime> {
    const runtime = await startRuntime({
      config,
      redisUrl: this.db.url,
      prefix: this.db.prefix,
      log: options.log ?? silentLogger(),
      ...(options.workers === undefined ? {} : { workers: options.workers }),
      ...(options.receivers === undefined ? {} : { receivers: options.receivers }),
      platforms: [createTelegramPlatform({ polling: FAST_POLLING, sender: options.sender })],
    });
    this.runtimes.push(runtime);
    return runtime;
  }

  /** Stops one process as `roomgate` does on SIGTERM (its running turns get `graceMs`). */
  async stop(runtime: Runtime, graceMs?: number): Promise<void> {
    this.runtimes.splice(this.runtimes.indexOf(runtime), 1);
    await runtime.stop(graceMs);
  }

  /** Stops the processes started so far, at once. */
  async stopAll(): Promise<void> {
    await Promise.all(this.runtimes.splice(0).map((r) => r.stop(0)));
  }

  async open(): Promise<void> {
    this.standinValue = await TelegramApiStandin.start({ perChatRate: this.options.perChatRate ?? false });
  }

  async fresh(): Promise<void> {
    this.dbValue = await testRedis();
    this.botValue = this.standin.addBot({
      ...(this.options.username ? { username: this.options.username } : {}),
      ...(this.options.topics ? { topics: true } : {}),
    });
  }

  async done(): Promise<void> {
    await this.stopAll();
    await this.dbValue?.cleanup();
  }

  async close(): Promise<void> {
    await this.standinValue?.close();
  }
}

/** A TelegramWorld for the calling test file, set up and torn down by vitest hooks. */
export function telegramWorld(options: WorldOptions = {}): TelegramWorld {
  const world = new TelegramWorld(options);
  const perTest = options.fresh === "test";
  beforeAll(async () => {
    await world.open();
    if (!perTest) await world.fresh();
  });
  afterAll(async () => {
    if (!perTest) await world.done();
    await world.close();
  });
  if (perTest) {
    beforeEach(() => world.fresh());
    afterEach(() => world.done());
  }
  return world;
}
