import { GrammyError } from "grammy";
import type { RedisClient } from "../sessions/redis-connection.js";
import type { DeliveryContext } from "../core/adapter.js";
import type { TelegramOrigin } from "../core/origin.js";
import type { Keys } from "../sessions/keys.js";
import { ChatMigrations } from "./chat-migrations.js";
import { PrivateTopics } from "./private-topics.js";
import { isTopicGone } from "./topic-lobby.js";

/**
 * What a reply does when its chat moved under it: a group upgraded to a supergroup
 * (400 with `migrate_to_chat_id`) is followed to its new id and the migration recorded
 * for every process; a private-chat topic the person deleted is forgotten, so that
 * /start makes it again. Without Redis both are only followed or logged.
 */
export class MovedChats {
  private readonly migrations = new Map<number, ChatMigrations>();

  constructor(
    private readonly keys: Keys,
    private readonly redis?: RedisClient,
  ) {}

  /**
   * Runs a send; when Telegram refuses it because the group became a supergroup,
   * records that, points `target` at the new chat (no reply to a message of the old
   * one) and sends again there.
   */
  async send<T>(target: TelegramOrigin, context: DeliveryContext, send: () => Promise<T>): Promise<T> {
    for (let hop = 0; ; hop++) {
      try {
        return await send();
      } catch (err) {
        if (isTopicGone(err)) await this.topicGone(target, context);
        const to = migratedTo(err);
        if (to === undefined || hop >= 2) throw err;
        context.log.info(
          { botId: target.botId, from: target.chatId, to },
          "telegram: the group was migrated to a supergroup; the reply goes to its new id",
        );
        await this.migrationsOf(target.botId)?.record(target.chatId, to);
        target.roomChat ??= target.chatId;
        target.chatId = to;
        target.chatType = "supergroup";
        delete target.messageId;
        delete target.topicId;
      }
    }
  }

  /** A private-chat topic the person deleted: forgotten, so that /start in the chat makes it again. */
  private async topicGone(target: TelegramOrigin, context: DeliveryContext): Promise<void> {
    if (target.chatType !== "private" || target.topicId === undefined || !this.redis) return;
    const topics = new PrivateTopics(this.redis, this.keys, target.botId);
    const gone = await topics.forgetThread(target.chatId, target.topicId);
    context.log.warn(
      { botId: target.botId, chatId: target.chatId, threadId: target.topicId, topic: gone?.name },
      "telegram: the reply's topic was deleted; /start in the chat makes the bot's topics again",
    );
  }

  private migrationsOf(botId: number): ChatMigrations | undefined {
    if (!this.redis) return undefined;
    let migrations = this.migrations.get(botId);
    if (!migrations) {
      migrations = new ChatMigrations(this.redis, this.keys, botId);
      this.migrations.set(botId, migrations);
    }
    return migrations;
  }
}

/** The supergroup a refused send names when its group was migrated (the error itself or its cause). */
function migratedTo(err: unknown): number | undefined {
  const grammy = err instanceof GrammyError ? err : (err as { cause?: unknown } | null)?.cause;
  if (!(grammy instanceof GrammyError) || grammy.error_code !== 400) return undefined;
  return grammy.parameters?.migrate_to_chat_id;
}
