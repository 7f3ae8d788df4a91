import type { Answer } from "../../src/core/answer.js";
import type { DeliveryContext, DeliveryLedger, Inbox } from "../../src/core/adapter.js";
import type { MatrixConfig } from "../../src/core/config.js";
import type { InboundEvent } from "../../src/core/event.js";
import { silentLogger } from "../../src/core/log.js";
import { matrixRoom } from "../../src/core/room.js";
import { runsTools } from "../../src/demo/runs.js";
import type { MatrixRetryPolicy } from "../../src/matrix/matrix-retry.js";

/** Retries as the adapter does, with waits short enough for tests. */
export const FAST_RETRY: MatrixRetryPolicy = {
  attempts: 6,
  firstMs: 10,
  jitter: true,
  maxMs: 50,
  maxRetryAfterMs: 5_000,
};

/** A delivery ledger in memory, as the worker keeps one per turn in Redis. */
export function memoryLedger(): DeliveryLedger & { entries: Map<string, string> } {
  const entries = new Map<string, string>();
  return {
    entries,
    async get(key) {
      return entries.get(key) ?? null;
    },
    async set(key, ref) {
      entries.set(key, ref);
    },
  };
}

/** A delivery context for one turn. */
export function deliveryContext(turnId: string, ledger: DeliveryLedger = memoryLedger()): DeliveryContext {
  return { turnId, ledger, log: silentLogger() };
}

/** An inbound message event as the Matrix receiver makes it, for sender tests. */
export function matrixQuestion(
  roomId: string,
  eventId: string,
  sender: string,
  origin: { threadRoot?: string } = {},
): InboundEvent {
  return {
    kind: "message",
    text: "question",
    eventId: `mx:${eventId}`,
    room: matrixRoom(roomId),
    namespace: "runs",
    platform: "matrix",
    sender: { id: sender, allowed: true },
    addressed: "mention",
    receivedAt: Date.now(),
    origin: { platform: "matrix", roomId, eventId, answerTo: eventId, ...origin },
  };
}

/** A Matrix config section for a stand-in homeserver and bound rooms. */
export function matrixConfig(
  homeserver: string,
  accessToken: string,
  rooms: {
    room: string;
    namespace?: string;
    users?: string[];
    powerLevel?: number;
    respond?: "mentions" | "all";
  }[],
  inviters: string[] = [],
): MatrixConfig {
  return {
    homeserver,
    accessToken,
    inviters,
    encryption: "optional",
    deviceLeaseSeconds: 10,
    trust: "cross-signed",
    // Every message, unless a test is about mention gating: these rooms are not direct rooms.
    rooms: rooms.map((r) => ({ namespace: "runs", users: [], respond: "all" as const, ...r })),
  };
}

/**
 * An Inbox that records what the receiver enqueues, de-duplicating by event id as
 * the real one does, for receiver tests that need no worker.
 */
export class RecordingInbox implements Inbox {
  readonly events: InboundEvent[] = [];
  private readonly seen = new Set<string>();

  async enqueue(event: InboundEvent): Promise<boolean> {
    if (this.seen.has(event.eventId)) return false;
    this.seen.add(event.eventId);
    this.events.push(event);
    return true;
  }

  /** Every event of the room recorded (none is ever taken off). */
  async queued(room: string): Promise<number> {
    return this.events.filter((e) => e.room === room).length;
  }
}

/** What a demo `runs` tool answers for these arguments: the text a test expects verbatim. */
export function runsAnswer(tool: string, args: Record<string, unknown> = {}): Answer {
  const found = runsTools.find((candidate) => candidate.name === tool);
  if (found?.kind !== "answer") throw new Error(`${tool} is not an Answer tool`);
  return found.run(args);
}
