import type { RedisClient } from "../sessions/redis-connection.js";
import { safeJson } from "../core/safe-json.js";
import { z } from "zod";
import { InboundEventSchema, type InboundEvent } from "../core/event.js";
import type { Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import type { ProactiveInbox } from "./proactive-inbox.js";
import type { ProactiveQueue } from "./proactive-queue.js";
import { roomToken } from "./schedule-ids.js";

/** The data of an `unmute` job. */
export const UnmuteJobSchema = z.object({ room: z.string().min(1) });

/** What happens to held turns when a mute ends. */
export type AfterMute = "deliver" | "drop";

/**
 * Held turns are released at the room's pace: no more than this many of them wait in
 * the room's inbox at once, so a person's message sent meanwhile waits behind a few
 * posts, not behind everything a month-long mute held.
 */
export const RELEASE_BATCH = 5;
/** How often a room with held turns still to release is looked at again. */
export const RELEASE_EVERY_MS = 1_000;

/**
 * `/mute <duration>`: a room's proactive turns are held (never a person's answers)
 * until the mute ends; then a bullmq job at that time queues them in order, or
 * drops them, as `proactive.afterMute` says.
 */
export class RoomMutes {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly queue: ProactiveQueue,
    private readonly inbox: ProactiveInbox,
    private readonly afterMute: AfterMute,
    private readonly log: Logger,
  ) {}

  /** Mutes the room until `untilMs` (replacing an earlier mute) and schedules its end. */
  async mute(room: string, untilMs: number): Promise<void> {
    await this.redis.set(this.keys.mute(room), String(untilMs), "PXAT", untilMs);
    await this.queue.add("unmute", { room }, `unmute.${roomToken(room)}.${untilMs}`, untilMs - Date.now());
  }

  /** Ends the room's mute now; held turns are released at the room's pace. */
  async unmute(room: string): Promise<string> {
    await this.redis.del(this.keys.mute(room));
    return this.release(room);
  }

  /** Until when the room is muted, or undefined. */
  mutedUntil(room: string): Promise<number | undefined> {
    return this.inbox.mutedUntil(room);
  }

  /** How many proactive turns are held for the room. */
  held(room: string): Promise<number> {
    return this.redis.hlen(this.keys.held(room));
  }

  /**
   * Queues (or drops) the room's held turns, oldest first, unless it is still muted
   * (a later /mute moved the end): as many as keep the room's inbox at RELEASE_BATCH,
   * the rest by a job RELEASE_EVERY_MS later, and so on. Each is removed only after it
   * is queued, and only that one (HDEL of its id), so a crash or a second release at
   * once queues none twice (the inbox de-duplicates by event id) and loses none.
   */
  async release(room: string): Promise<string> {
    if (await this.inbox.mutedUntil(room)) return "still muted";
    const key = this.keys.held(room);
    if (this.afterMute === "drop") {
      const dropped = await this.redis.hlen(key);
      await this.redis.del(key);
      if (dropped > 0) this.log.info({ room, dropped }, "mute ended; held proactive turns dropped");
      return `${dropped} held post${dropped === 1 ? "" : "s"} dropped`;
    }
    const held = heldInOrder(await this.redis.hgetall(key));
    const space = Math.max(0, RELEASE_BATCH - (await this.inbox.queued(room)));
    let queued = 0;
    let taken = 0;
    for (const { id, event } of held) {
      if (event && queued >= space) break;
      if (event && (await this.inbox.enqueue(event))) queued += 1;
      else if (!event) this.log.error({ room }, "unreadable held event dropped");
      await this.redis.hdel(key, id);
      taken += 1;
    }
    const left = held.length - taken;
    if (left > 0) await this.releaseLater(room);
    if (queued > 0) this.log.info({ room, queued, left }, "mute ended; held proactive turns queued");
    const delivered = `${queued} held post${queued === 1 ? "" : "s"} delivered`;
    return left > 0 ? `${delivered}, ${left} more at the room's pace` : delivered;
  }

  /** The next release of a room with held turns left; one job per room and interval, however many ask. */
  private async releaseLater(room: string): Promise<void> {
    const slot = Math.floor(Date.now() / RELEASE_EVERY_MS) + 1;
    await this.queue.add("unmute", { room }, `unmute.${roomToken(room)}.pace.${slot}`, RELEASE_EVERY_MS);
  }
}

/** The held events by id, in the order they came (unreadable ones first, to be dropped). */
function heldInOrder(held: Record<string, string>): { id: string; event?: InboundEvent }[] {
  return Object.entries(held)
    .map(([id, raw]) => {
      const parsed = InboundEventSchema.safeParse(safeJson(raw));
      return parsed.success ? { id, event: parsed.data } : { id };
    })
    .sort((a, b) => (a.event?.receivedAt ?? 0) - (b.event?.receivedAt ?? 0) || a.id.localeCompare(b.id));
}
