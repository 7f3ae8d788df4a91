import type { RedisClient } from "../sessions/redis-connection.js";
import { safeJson } from "../core/safe-json.js";
import { z } from "zod";
import type { Keys } from "../sessions/keys.js";

/** A private-chat topic the bot made: its thread and the namespace it was made for. */
const StoredTopicSchema = z.object({ threadId: z.number().int().positive(), namespace: z.string() });

/** One topic the bot made in a private chat, by the name it was given. */
export interface StoredTopic {
  name: string;
  threadId: number;
  namespace: string;
}

/**
 * The topics a bot created in each private chat (name → thread), kept in Redis so that
 * /start finds them again after a restart and every process agrees; the edge reads a
 * chat's topics once and then from memory, so that a message in a topic is bound to
 * its namespace without a round trip.
 */
export class PrivateTopics {
  private readonly chats = new Map<number, Map<string, StoredTopic>>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly botId: number,
  ) {}

  /** Reads a chat's topics unless already read (or again with `fresh`). */
  async load(chatId: number, fresh = false): Promise<void> {
    if (!fresh && this.chats.has(chatId)) return;
    const raw = await this.redis.hgetall(this.keys.telegramTopics(this.botId, chatId));
    const topics = new Map<string, StoredTopic>();
    for (const [name, value] of Object.entries(raw)) {
      const parsed = StoredTopicSchema.safeParse(safeJson(value));
      if (parsed.success) topics.set(name, { name, ...parsed.data });
    }
    this.chats.set(chatId, topics);
  }

  /** The topic a thread is, when the bot made it (after `load`). */
  byThread(chatId: number, threadId: number): StoredTopic | undefined {
    for (const topic of this.chats.get(chatId)?.values() ?? []) if (topic.threadId === threadId) return topic;
    return undefined;
  }

  /** The topic of that name, when the bot made one (after `load`). */
  byName(chatId: number, name: string): StoredTopic | undefined {
    return this.chats.get(chatId)?.get(name);
  }

  /** Records a topic the bot made. */
  async save(chatId: number, topic: StoredTopic): Promise<void> {
    const value = JSON.stringify({ threadId: topic.threadId, namespace: topic.namespace });
    await this.redis.hset(this.keys.telegramTopics(this.botId, chatId), topic.name, value);
    let topics = this.chats.get(chatId);
    if (!topics) this.chats.set(chatId, (topics = new Map()));
    topics.set(topic.name, topic);
  }

  /** Forgets a topic that is gone (deleted by the person), so that /start makes it again. */
  async forgetThread(chatId: number, threadId: number): Promise<StoredTopic | undefined> {
    await this.load(chatId, true);
    const topic = this.byThread(chatId, threadId);
    if (!topic) return undefined;
    await this.redis.hdel(this.keys.telegramTopics(this.botId, chatId), topic.name);
    this.chats.get(chatId)?.delete(topic.name);
    return topic;
  }
}
