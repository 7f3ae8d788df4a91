import type { RedisClient } from "../sessions/redis-connection.js";
import { safeJson } from "../core/safe-json.js";
import type { Logger } from "../core/log.js";
import { TurnOutcomeSchema, type TurnOutcome } from "../core/reply.js";
import { schedulerKeysOf, type KeyLayout, type SchedulerKeys } from "./scheduler-keys.js";
import {
  HistoryEntrySchema,
  SessionSchema,
  newSession,
  type HistoryEntry,
  type Session,
} from "../sessions/session.js";

/**
 * The per-room session state in Redis (DESIGN §7). Workers read it with the room's
 * claim and write it with the turn's fenced step (src/scheduler/turn-commit.ts builds what
 * is written); this class parses what was read.
 */
export class RedisSessionStore {
  private readonly keys: SchedulerKeys;

  constructor(
    private readonly redis: RedisClient,
    layout: KeyLayout,
    private readonly options: { idleSeconds: number; historyTurns: number },
    private readonly log: Logger,
  ) {
    this.keys = schedulerKeysOf(layout);
  }

  /** Parses a session and history as read from Redis; a new session if none, unreadable, or of another namespace. */
  parse(
    room: string,
    namespace: string,
    raw: string | null,
    rawHistory: string[],
  ): { session: Session; history: HistoryEntry[] } {
    let session = raw ? this.parseSession(room, raw) : undefined;
    // The binding changed: the old conversation belonged to another agent.
    if (session && session.namespace !== namespace) session = undefined;
    return {
      session: session ?? newSession(namespace),
      history: session ? this.parseHistory(rawHistory) : [],
    };
  }

  /** Parses history entries as read from Redis, leaving out unreadable ones. */
  parseHistory(rawHistory: string[]): HistoryEntry[] {
    return rawHistory.flatMap((line) => {
      const parsed = HistoryEntrySchema.safeParse(safeJson(line));
      return parsed.success ? [parsed.data] : [];
    });
  }

  /**
   * The room's history (its last `historyTurns` turns; the list may hold a few more
   * until it is next trimmed), read only for namespaces whose tools take it.
   */
  async history(room: string): Promise<string[]> {
    return this.redis.lrange(this.keys.history(room), -this.options.historyTurns * 2, -1);
  }

  /** How long sessions live and how much history a turn keeps. */
  get settings(): { idleSeconds: number; historyTurns: number } {
    return { idleSeconds: this.options.idleSeconds, historyTurns: this.options.historyTurns };
  }

  /** Parses a stored outcome; null when missing or unreadable (the turn is computed again). */
  parseOutcome(raw: string | null | undefined): TurnOutcome | null {
    if (!raw) return null;
    const parsed = TurnOutcomeSchema.safeParse(safeJson(raw));
    return parsed.success ? parsed.data : null;
  }

  /** The offer id a platform message carries, if any. */
  async offerByRef(room: string, messageRef: string): Promise<string | null> {
    return this.redis.hget(this.keys.offerRefs(room), messageRef);
  }

  private parseSession(room: string, raw: string): Session | undefined {
    const parsed = SessionSchema.safeParse(safeJson(raw));
    if (parsed.success) return parsed.data;
    this.log.error(
      { room, issues: parsed.error.issues.slice(0, 3) },
      "session record unreadable; starting anew",
    );
    return undefined;
  }
}
