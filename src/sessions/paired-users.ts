import type { RedisClient } from "./redis-connection.js";
import { z } from "zod";
import type { Keys } from "./keys.js";

/** How often a process looks whether paired users changed (one GET). */
const REFRESH_MS = 2_000;

/** One person `/pair` added to a binding. */
export const PairedUserSchema = z.object({
  pairedAt: z.number(),
  /** Their name on the platform when they paired, for `roomgate users list`. */
  name: z.string().optional(),
  /** Who made the code they used. */
  codeBy: z.string().optional(),
});
export type PairedUser = z.infer<typeof PairedUserSchema>;

/**
 * The users pairing added to bindings, kept in Redis (one hash per binding, all under
 * one hash tag with a version counter) and mirrored in each process, so that the edge
 * decides from memory, as it does for configured users. A change made anywhere (a
 * pairing, `roomgate users remove`) bumps the version; every process reloads within
 * a couple of seconds, the one that made the change at once.
 */
export class PairedUsers {
  private users = new Map<string, Set<string>>();
  private version: string | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly bindings: readonly string[],
  ) {}

  /** Loads the paired users and keeps them current until `stop`. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** True when `/pair` added the sender to the binding (as of the last reload). */
  has(binding: string, senderId: string): boolean {
    return this.users.get(binding)?.has(senderId) ?? false;
  }

  /** Adds a sender to a binding; true when they were not on it yet. */
  async add(binding: string, senderId: string, record: PairedUser): Promise<boolean> {
    const replies = await this.redis
      .multi()
      .hsetnx(this.keys.pairedUsers(binding), senderId, JSON.stringify(record))
      .incr(this.keys.pairedVersion)
      .exec();
    await this.refresh();
    return replies?.[0]?.[1] === 1;
  }

  /** Removes a sender from a binding; true when they were on it. */
  async remove(binding: string, senderId: string): Promise<boolean> {
    const replies = await this.redis
      .multi()
      .hdel(this.keys.pairedUsers(binding), senderId)
      .incr(this.keys.pairedVersion)
      .exec();
    await this.refresh();
    return replies?.[0]?.[1] === 1;
  }

  /** A binding's paired users with their records, read from Redis. */
  async list(binding: string): Promise<{ user: string; record: PairedUser }[]> {
    const raw = await this.redis.hgetall(this.keys.pairedUsers(binding));
    return Object.entries(raw).flatMap(([user, json]) => {
      try {
        return [{ user, record: PairedUserSchema.parse(JSON.parse(json)) }];
      } catch {
        return [];
      }
    });
  }

  private async refresh(): Promise<void> {
    const version = (await this.redis.get(this.keys.pairedVersion)) ?? "0";
    if (version === this.version) return;
    const next = new Map<string, Set<string>>();
    for (const binding of this.bindings) {
      next.set(binding, new Set(Object.keys(await this.redis.hgetall(this.keys.pairedUsers(binding)))));
    }
    this.users = next;
    this.version = version;
  }
}
