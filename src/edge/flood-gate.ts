import type { Redis } from "ioredis";
import type { Keys } from "../sessions/keys.js";
import { edgeTexts } from "./edge-texts.js";
import { claimNotice } from "./notice-once.js";

/** Inbound flood limits, from `limits` in the configuration. */
export interface FloodLimits {
  turnsPerMinute: number;
  roomQueueCap: number;
}

/** What the gate says about one inbound event. */
export type FloodVerdict =
  | { admit: true }
  /** Not admitted; `notice` is the one line to send, or undefined when it was already sent. */
  | { admit: false; notice: string | undefined };

/** Counts one turn of a person in the current minute, in one atomic step by Redis' clock. */
const COUNT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`;

/**
 * Inbound flood control at the edge: a person may start `turnsPerMinute` turns a minute
 * and a room may hold `roomQueueCap` waiting events. The excess is not queued; the person
 * gets one notice per kind until the limit's window has passed.
 */
export class FloodGate {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly limits: FloodLimits,
  ) {}

  /** Whether one more event of this person in this room may be queued. */
  async check(room: string, userId: string): Promise<FloodVerdict> {
    const { turnsPerMinute, roomQueueCap } = this.limits;
    const waiting = await this.redis.llen(this.keys.inbox(room));
    if (waiting >= roomQueueCap)
      return this.refuse(room, "queue", userId, edgeTexts.queueFull(roomQueueCap), 60);
    const count = Number(await this.redis.eval(COUNT, 1, this.keys.turnRate(userId), "60"));
    if (count > turnsPerMinute)
      return this.refuse(room, "rate", userId, edgeTexts.tooFast(turnsPerMinute), 60);
    return { admit: true };
  }

  private async refuse(
    room: string,
    kind: string,
    userId: string,
    text: string,
    seconds: number,
  ): Promise<FloodVerdict> {
    const first = await claimNotice(this.redis, this.keys.notice(room, kind, userId), seconds);
    return { admit: false, notice: first ? text : undefined };
  }
}
