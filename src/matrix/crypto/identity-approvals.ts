import type { RedisClient } from "../../sessions/redis-connection.js";
import type { PinApprovals } from "./sender-trust.js";

/**
 * The operator's approvals of people's changed identities, in Redis so that
 * `roomgate matrix trust <user>` (any machine) reaches the process that owns the device:
 * the master key the operator saw and approved, per user. The owner pins it when it
 * next meets that person, and only if their identity is still that master key.
 */
export class IdentityApprovals implements PinApprovals {
  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
  ) {}

  /** Records the operator's approval of `masterKey` as `userId`'s identity. */
  async approve(userId: string, masterKey: string): Promise<void> {
    await this.redis.hset(this.key, userId, masterKey);
  }

  async approved(userId: string): Promise<string | undefined> {
    return (await this.redis.hget(this.key, userId)) ?? undefined;
  }

  /** The approval was applied: it is removed unless the operator approved another key meanwhile. */
  async applied(userId: string, masterKey: string): Promise<void> {
    if ((await this.redis.hget(this.key, userId)) === masterKey) await this.redis.hdel(this.key, userId);
  }

  /** Approvals not applied yet (the person has not written since). */
  async pending(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.key);
  }
}
