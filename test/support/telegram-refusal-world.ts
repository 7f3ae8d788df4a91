import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { UNQUEUED_NOTICE } from "../../src/core/unqueued.js";
import { RedisServer } from "../../src/sessions/redis-server.js";
import type { RoomgateProcess } from "./roomgate-process.js";
import { snapshotRefusal } from "./snapshot-refusal.js";
import { TelegramApiStandin, type StandinBot } from "./telegram-api-standin.js";

/** What a test file gets from `telegramRefusalWorld`; `dir`, `server`, `standin` and `bot` exist once beforeAll ran. */
export interface TelegramRefusalWorld {
  /** The test file's temporary folder (the Redis data is in `redis/` below it). */
  dir: string;
  server: RedisServer;
  standin: TelegramApiStandin;
  bot: StandinBot;
  /** The roomgate under test: the test starts it, afterAll kills it. */
  roomgate: RoomgateProcess | undefined;
  /** Makes the Redis refuse writes (MISCONF) and waits until it does. */
  refuseWrites(): Promise<void>;
  /** Lets it take writes again and waits until it does. */
  acceptWrites(): Promise<void>;
  /** The texts the bot sent to a chat, in order. */
  texts(chatId: number): (string | undefined)[];
  /** The "cannot be queued" notices among them. */
  notices(chatId: number): (string | undefined)[];
}

/**
 * A Telegram test file's world around a redis-server of its own that can be made to
 * refuse writes: the server and the Bot API stand-in with one bot, started in beforeAll;
 * the roomgate the test started, the stand-in and the server stopped in afterAll.
 * `name` prefixes the temporary folder; `perChatRate` makes the stand-in answer 429 to
 * a second message in a chat within a second.
 */
export function telegramRefusalWorld(
  name: string,
  options: { perChatRate?: boolean } = {},
): TelegramRefusalWorld {
  let admin: Redis | undefined;
  const world: TelegramRefusalWorld = {
    roomgate: undefined,
    refuseWrites: () => snapshotRefusal.start(admin!, join(world.dir, "redis")),
    acceptWrites: () => snapshotRefusal.end(admin!, join(world.dir, "redis")),
    texts: (chatId) => world.standin.botMessages(world.bot.token, chatId).map((m) => m.text),
    notices: (chatId) => world.texts(chatId).filter((t) => t === UNQUEUED_NOTICE),
  } as Partial<TelegramRefusalWorld> as TelegramRefusalWorld;
  beforeAll(async () => {
    world.dir = mkdtempSync(join(tmpdir(), `${name}-`));
    world.server = await RedisServer.start({ dir: join(world.dir, "redis") });
    admin = new Redis(world.server.url, { maxRetriesPerRequest: 1 });
    world.standin = await TelegramApiStandin.start({ perChatRate: options.perChatRate ?? false });
    world.bot = world.standin.addBot();
  });
  afterAll(async () => {
    world.roomgate?.kill();
    admin?.disconnect();
    await world.standin?.close();
    await world.server?.stop();
    if (world.dir) rmSync(world.dir, { recursive: true, force: true });
  });
  return world;
}
