import type { RedisClient } from "../sessions/redis-connection.js";
import { RecentOnce } from "./recent-once.js";

/** How long a refusal or leaving notice is not repeated (Redis' own clock keeps it across processes). */
export const NOTICE_SECONDS = 3600;
const HOUR_MS = NOTICE_SECONDS * 1000;

/**
 * What a stranger (or an unbound group) may cost, decided at the edge (DESIGN §9): one
 * log line per sender an hour, and for a notice one Redis key an hour, written once per
 * process — repeats inside the hour touch neither the log nor Redis. The Redis key is
 * what keeps several processes to one notice; the local memory is what makes a repeat
 * free.
 */
export class StrangerGate {
  private readonly logged = new RecentOnce();
  private readonly claimed = new RecentOnce();

  constructor(private readonly redis: RedisClient) {}

  /** True when this sender's refusal is to be logged now: once an hour per sender and process. */
  logOnce(sender: string): boolean {
    return this.logged.first(sender, HOUR_MS);
  }

  /**
   * Claims the notice behind `key` (`Keys.refused`, `Keys.notice`): true for exactly
   * one caller an hour across all processes. A key known to be held costs no round
   * trip; otherwise one `SET NX EX` with its remaining time in the same round trip.
   */
  async claim(key: string): Promise<boolean> {
    if (this.claimed.has(key)) return false;
    const replies = await this.redis.pipeline().set(key, "1", "EX", NOTICE_SECONDS, "NX").pttl(key).exec();
    const won = replies?.[0]?.[1] === "OK";
    const left = Number(replies?.[1]?.[1]);
    this.claimed.remember(key, won || !(left > 0) ? HOUR_MS : left);
    return won;
  }
}
