import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { RedisClient } from "./redis-connection.js";
import type { SendWindow } from "../core/adapter.js";
import { sleep } from "../core/retry.js";

/** The send-slot script's text as sent (sessions/lua/windows.lua + reserve-slot.lua). */
export const reserveSlotScript =
  readFileSync(new URL("./lua/windows.lua", import.meta.url), "utf8") +
  "\n" +
  readFileSync(new URL("./lua/reserve-slot.lua", import.meta.url), "utf8");

type Reserve = (numKeys: number, ...args: (string | number)[]) => Promise<unknown>;

/**
 * A send limiter shared by every process through Redis, on Redis' own clock (TIME
 * inside the script): a send takes a slot in each of its windows (per bot, per
 * chat, per group) or learns how long to wait. Turns take their slots through the
 * fenced turn step instead (src/queue/lua/turn-step.lua); this is for sends
 * outside a turn and for recording a platform's 429.
 */
export class RedisRateLimiter {
  constructor(private readonly redis: RedisClient) {
    if (!("rgReserve" in redis)) redis.defineCommand("rgReserve", { lua: reserveSlotScript });
  }

  private call(windows: SendWindow[], mode: "take" | "hold", ms = 0): Promise<number> {
    const run = (this.redis as unknown as { rgReserve: Reserve }).rgReserve.bind(this.redis);
    return run(
      windows.length,
      ...windows.map((w) => w.key),
      randomUUID(),
      mode,
      ms,
      ...windows.flatMap((w) => [w.max, w.windowMs]),
    ).then(Number);
  }

  /** Takes one slot in every window, or returns the ms to wait (nothing taken then). */
  async tryAcquire(windows: SendWindow[]): Promise<number> {
    if (windows.length === 0) return 0;
    return this.call(windows, "take");
  }

  /** Waits until one slot is free in every window and takes it. */
  async acquire(windows: SendWindow[], signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const wait = await this.tryAcquire(windows);
      if (wait <= 0) return;
      await sleep(wait);
    }
  }

  /** Blocks the windows for every process until `ms` from now (a platform's retry_after). */
  async hold(windows: SendWindow[], ms: number): Promise<void> {
    if (windows.length === 0 || ms <= 0) return;
    await this.call(windows, "hold", Math.ceil(ms));
  }
}
