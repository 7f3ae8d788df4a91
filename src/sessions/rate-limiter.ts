import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";

const script = readFileSync(new URL("./lua/reserve-slot.lua", import.meta.url), "utf8");

/** One sliding window: at most `max` sends per `windowMs` in the Redis key. */
export interface RateWindow {
  key: string;
  max: number;
  windowMs: number;
}

/**
 * A send limiter shared by every process through Redis: a send waits until each of
 * its windows (per bot, per chat, per group) has room, so several workers together
 * stay under a platform's limits.
 */
export class RedisRateLimiter {
  constructor(private readonly redis: Redis) {}

  /** Waits until one slot is free in every window and takes it. */
  async acquire(windows: RateWindow[], signal?: AbortSignal): Promise<void> {
    if (windows.length === 0) return;
    const member = randomUUID();
    for (;;) {
      signal?.throwIfAborted();
      const args = windows.flatMap((w) => [String(w.max), String(w.windowMs)]);
      const wait = Number(
        await this.redis.eval(
          script,
          windows.length,
          ...windows.map((w) => w.key),
          String(Date.now()),
          member,
          ...args,
        ),
      );
      if (wait <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 1000)));
    }
  }
}
