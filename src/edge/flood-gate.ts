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

/**
 * One round trip (EVALSHA): the room's waiting events, then — unless the queue is
 * full — one more turn of the person counted in the current minute, by Redis' clock.
 * KEYS[1] the room's inbox, KEYS[2] the person's counter; ARGV[1] the window (s),
 * ARGV[2] the queue cap. Returns {waiting, count} (count 0 when not counted).
 */
const CHECK = `
local waiting = redis.call('LLEN', KEYS[1])
if waiting >= tonumber(ARGV[2]) then return {waiting, 0} end
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('EXPIRE', KEYS[2], ARGV[1]) end
return {waiting, n}`;

type FloodCheck = (inbox: string, counter: string, window: string, cap: number) => Promise<[number, number]>;

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
  ) {
    if (!("rgFloodCheck" in redis)) redis.defineCommand("rgFloodCheck", { lua: CHECK, numberOfKeys: 2 });
  }

  /** Whether one more event of this person in this room may be queued. */
  async check(room: string, userId: string): Promise<FloodVerdict> {
    const { turnsPerMinute, roomQueueCap } = this.limits;
    const run = (this.redis as unknown as { rgFloodCheck: FloodCheck }).rgFloodCheck.bind(this.redis);
    const [waiting, counted] = await run(
      this.keys.inbox(room),
      this.keys.turnRate(userId),
      "60",
      roomQueueCap,
    );
    if (waiting >= roomQueueCap)
      return this.refuse(room, "queue", userId, edgeTexts.queueFull(roomQueueCap), 60);
    const count = Number(counted);
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
