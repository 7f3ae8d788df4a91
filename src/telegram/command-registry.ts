import { createHash } from "node:crypto";
import type { Api } from "grammy";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { Logger } from "../core/log.js";
import { menuCommands } from "../engine/commands/index.js";
import type { Keys } from "../sessions/keys.js";
import { loggableError } from "./loggable-error.js";

/**
 * Registers the command menu with setMyCommands only when the list changed since the
 * last start (a hash is kept in Redis), so restarts cost no API call; a failure is
 * logged and does not keep the bot from starting.
 */
export async function registerCommands(
  api: Api,
  botId: number,
  redis: RedisClient,
  keys: Keys,
  log: Logger,
): Promise<boolean> {
  const commands = menuCommands();
  const hash = createHash("sha256").update(JSON.stringify(commands)).digest("hex");
  const key = keys.telegramCommands(botId);
  try {
    if ((await redis.get(key)) === hash) return false;
    await api.setMyCommands(commands);
    await redis.set(key, hash);
    log.info({ botId, count: commands.length }, "telegram: registered the command menu");
    return true;
  } catch (err) {
    log.warn({ err: loggableError(err), botId }, "telegram: could not register the command menu");
    return false;
  }
}
