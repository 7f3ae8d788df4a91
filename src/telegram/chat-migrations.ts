import type { RedisClient } from "../sessions/redis-connection.js";
import type { ChatAliases } from "../access/telegram.js";
import type { Keys } from "../sessions/keys.js";

/** Longest chain of migrations followed (a group migrates once; the bound only guards against a cycle). */
const MAX_HOPS = 4;

/**
 * The groups one bot saw upgraded to a supergroup (Telegram's `migrate_to_chat_id`),
 * kept in Redis so that every process agrees, with an in-memory copy for the edge's
 * lookups: a migrated group continues as the same room and binding under its new id.
 */
export class ChatMigrations implements ChatAliases {
  private readonly toNew = new Map<number, number>();
  private readonly toOld = new Map<number, number>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly botId: number,
  ) {}

  /** Reads every migration recorded for the bot (at start, and before a chat is given up as unbound). */
  async load(): Promise<void> {
    const all = await this.redis.hgetall(this.keys.telegramMigrations(this.botId));
    for (const [from, to] of Object.entries(all)) this.remember(Number(from), Number(to));
  }

  /** Records that `from` became `to`; true when it was not known before. */
  async record(from: number, to: number): Promise<boolean> {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from === to) return false;
    const fresh = this.toNew.get(from) !== to;
    this.remember(from, to);
    await this.redis.hset(this.keys.telegramMigrations(this.botId), String(from), String(to));
    return fresh;
  }

  original(chatId: number): number {
    return follow(this.toOld, chatId);
  }

  newest(chatId: number): number {
    return follow(this.toNew, chatId);
  }

  private remember(from: number, to: number): void {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return;
    this.toNew.set(from, to);
    this.toOld.set(to, from);
  }
}

function follow(links: Map<number, number>, chatId: number): number {
  let id = chatId;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const next = links.get(id);
    if (next === undefined || next === chatId) return id;
    id = next;
  }
  return id;
}
