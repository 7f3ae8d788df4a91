import type { RedisClient } from "../sessions/redis-connection.js";
import type { Inbox } from "../core/adapter.js";
import { InboundEventSchema, type InboundEvent, type ProactiveSource } from "../core/event.js";
import { roomOrigin } from "../core/origin.js";
import { platformOf } from "../core/room.js";
import type { Keys } from "../sessions/keys.js";
import { durableWrite, type Durability } from "../scheduler/durable-write.js";

/** One turn no person started, before it is an event. */
export interface ProactiveTurn {
  /** The event id: the source and its instance (a schedule and its fire time, a hook and its delivery). */
  eventId: string;
  room: string;
  namespace: string;
  source: ProactiveSource;
  /** The question for the router. */
  text: string;
  read?: { uri: string; then: "show" | "ask" };
}

/** What became of a proactive turn: queued, seen before, or held by a mute. */
export type ProactiveResult = "queued" | "duplicate" | "held";

/** How long held events are kept at most: longer than any mute /mute accepts. */
const HELD_KEEP_MS = 31 * 24 * 3600_000;

/** The inbound event of a proactive turn: no person, so the sender names the source. */
export function proactiveEvent(turn: ProactiveTurn): InboundEvent {
  return InboundEventSchema.parse({
    kind: "proactive",
    eventId: turn.eventId,
    room: turn.room,
    namespace: turn.namespace,
    platform: platformOf(turn.room),
    sender: { id: `${turn.source.type}:${turn.source.name}`, allowed: true },
    addressed: "proactive",
    receivedAt: Date.now(),
    origin: roomOrigin(turn.room),
    source: turn.source,
    text: turn.text,
    ...(turn.read ? { read: turn.read } : {}),
  });
}

/**
 * Where schedules, hooks and resource updates put their turns: into the room's inbox
 * (the same de-duplication by event id, the same queue, limits, deadline and dead
 * letters as a person's turn, without a person's flood limits), or aside while the
 * room is muted (`/mute`), to be queued when the mute ends.
 */
export class ProactiveInbox {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly inbox: Inbox,
    private readonly durability: Durability,
    /** Called when an event was held just as the mute ended, so that it is not stranded. */
    private readonly released: (room: string) => Promise<void>,
  ) {}

  /** Queues the turn (or holds it while the room is muted). */
  async put(turn: ProactiveTurn): Promise<ProactiveResult> {
    const event = proactiveEvent(turn);
    if (!(await this.mutedUntil(turn.room))) {
      return (await this.inbox.enqueue(event)) ? "queued" : "duplicate";
    }
    const added = await this.hold(turn.room, event);
    // The mute may have ended (and its held events been queued) between the check and the push.
    if (!(await this.mutedUntil(turn.room))) await this.released(turn.room);
    return added ? "held" : "duplicate";
  }

  /**
   * Sets the event aside until the room's mute ends, once per event id (a sender's
   * retry of a held delivery is a duplicate, as it is in the inbox); false when it was
   * held already. A sender is told it was accepted (a webhook's 202), so where the
   * topology has replicas the write waits for them, as an enqueue does, in the same
   * round trip (WAIT on the hash's master).
   */
  private async hold(room: string, event: InboundEvent): Promise<boolean> {
    const held = this.keys.held(room);
    const [added] = await durableWrite(this.redis, this.durability, held, [
      ["hsetnx", held, event.eventId, JSON.stringify(event)],
      ["pexpire", held, HELD_KEEP_MS],
    ]);
    return Number(added) === 1;
  }

  /** Queues an event exactly as it is (a held one being released). */
  async enqueue(event: InboundEvent): Promise<boolean> {
    return this.inbox.enqueue(event);
  }

  /** How many events wait in the room's inbox. */
  queued(room: string): Promise<number> {
    return this.inbox.queued(room);
  }

  /** Until when (ms) the room is muted, or undefined. */
  async mutedUntil(room: string): Promise<number | undefined> {
    const until = Number(await this.redis.get(this.keys.mute(room)));
    return Number.isFinite(until) && until > Date.now() ? until : undefined;
  }
}
