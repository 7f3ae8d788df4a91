import type { RedisClient } from "../sessions/redis-connection.js";
import type { IFilterInfo, IStorageProvider } from "matrix-bot-sdk";
import { z } from "zod";

const FilterSchema = z.object({ id: z.union([z.number(), z.string()]), filter: z.unknown() });

const SYNC_TOKEN = "sync-token";
const FILTER = "filter";
const VALUE = "kv:";

/**
 * matrix-bot-sdk's storage in one Redis hash per bot account (sync token, filter and
 * the SDK's key-values), so the process keeps no state and a restarted one resumes
 * the sync where the last one stopped.
 */
export class RedisStorageProvider implements IStorageProvider {
  constructor(
    private readonly redis: RedisClient,
    /** The hash, `keys.matrixStorage(userId)`. */
    readonly key: string,
  ) {}

  async setSyncToken(token: string | null): Promise<void> {
    if (token === null) await this.redis.hdel(this.key, SYNC_TOKEN);
    else await this.redis.hset(this.key, SYNC_TOKEN, token);
  }

  async getSyncToken(): Promise<string | null> {
    return this.redis.hget(this.key, SYNC_TOKEN);
  }

  async setFilter(filter: IFilterInfo): Promise<void> {
    await this.redis.hset(this.key, FILTER, JSON.stringify(filter));
  }

  async getFilter(): Promise<IFilterInfo> {
    const raw = await this.redis.hget(this.key, FILTER);
    const parsed = raw === null ? undefined : FilterSchema.safeParse(JSON.parse(raw));
    // The SDK's interface has no "none" in its type, but its caller treats a falsy value as none.
    return (parsed?.success ? parsed.data : null) as IFilterInfo;
  }

  async storeValue(key: string, value: string): Promise<void> {
    await this.redis.hset(this.key, VALUE + key, value);
  }

  async readValue(key: string): Promise<string | null> {
    return this.redis.hget(this.key, VALUE + key);
  }
}
