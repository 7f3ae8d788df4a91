import type { RedisClient } from "../../sessions/redis-connection.js";
import { RedisStorageProvider } from "../redis-storage-provider.js";
import type { CryptoStore } from "./crypto-store.js";

/**
 * The sync storage of the process that owns the device: the sync token lives with the
 * device's store and is written fenced by its lease, since to-device messages (room
 * keys) are acknowledged by it. The account's own token follows it, unfenced: a new
 * device of the bot (after a lost store), like the first encrypted start, continues
 * from where the last one stopped, so nothing received meanwhile is skipped.
 */
export class DeviceStorageProvider extends RedisStorageProvider {
  constructor(
    redis: RedisClient,
    key: string,
    private readonly store: CryptoStore,
    private readonly leaseToken: () => string,
  ) {
    super(redis, key);
  }

  override async getSyncToken(): Promise<string | null> {
    const own = await this.store.syncToken();
    // "" records that the SDK forgot the token (a new filter): start fresh, not from the old bot's.
    if (own !== null) return own === "" ? null : own;
    return super.getSyncToken();
  }

  override async setSyncToken(token: string | null): Promise<void> {
    await this.store.saveSyncToken(this.leaseToken(), token ?? "");
    if (token) await super.setSyncToken(token);
  }
}
