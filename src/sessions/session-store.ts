import type { Redis } from "ioredis";
import type { DeliveryLedger } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { TurnOutcomeSchema, type TurnOutcome } from "../core/reply.js";
import type { Keys } from "./keys.js";
import { HistoryEntrySchema, SessionSchema, newSession, type HistoryEntry, type Session } from "./session.js";

/** How long a turn's outcome and delivery ledger are kept, to make a retried turn idempotent. */
const TURN_RECORD_SECONDS = 24 * 3600;

/** Everything one turn changes in a room, written at once. */
export interface TurnCommit {
  session: Session;
  append: HistoryEntry[];
  outcome: TurnOutcome;
  /** `/reset`: the old history goes with the old conversation. */
  resetHistory?: boolean;
}

/**
 * The per-room session state in Redis (DESIGN §7): read and parse, then commit a
 * whole turn in one MULTI so a crash leaves either the old state or the new one.
 */
export class RedisSessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    private readonly options: { idleSeconds: number; historyTurns: number },
    private readonly log: Logger,
  ) {}

  /** The room's session (a new one if none or expired) and its recent history. */
  async load(room: string, namespace: string): Promise<{ session: Session; history: HistoryEntry[] }> {
    const [[, raw], [, rawHistory]] = (await this.redis
      .multi()
      .get(this.keys.session(room))
      .lrange(this.keys.history(room), 0, -1)
      .exec()) as [[null, string | null], [null, string[]]];
    let session = raw ? this.parseSession(room, raw) : undefined;
    if (session && session.namespace !== namespace) {
      // The binding changed: the old conversation belonged to another agent.
      session = undefined;
    }
    const history = session
      ? rawHistory.flatMap((line) => {
          const parsed = HistoryEntrySchema.safeParse(safeJson(line));
          return parsed.success ? [parsed.data] : [];
        })
      : [];
    return { session: session ?? newSession(namespace), history };
  }

  /** Writes the turn's session, history and outcome together, refreshing the idle expiry. */
  async commit(room: string, eventId: string, commit: TurnCommit): Promise<void> {
    const { idleSeconds, historyTurns } = this.options;
    const multi = this.redis.multi();
    multi.set(this.keys.session(room), JSON.stringify(commit.session), "EX", idleSeconds);
    const history = this.keys.history(room);
    if (commit.resetHistory) multi.del(history, this.keys.offerRefs(room));
    if (commit.append.length > 0) {
      multi.rpush(history, ...commit.append.map((e) => JSON.stringify(e)));
      multi.ltrim(history, -historyTurns * 2, -1);
    }
    multi.expire(history, idleSeconds);
    multi.expire(this.keys.offerRefs(room), idleSeconds);
    multi.set(this.keys.outcome(room, eventId), JSON.stringify(commit.outcome), "EX", TURN_RECORD_SECONDS);
    await multi.exec();
  }

  /** The outcome already computed for a turn, when the turn is being retried. */
  async outcome(room: string, eventId: string): Promise<TurnOutcome | null> {
    const raw = await this.redis.get(this.keys.outcome(room, eventId));
    if (!raw) return null;
    const parsed = TurnOutcomeSchema.safeParse(safeJson(raw));
    return parsed.success ? parsed.data : null;
  }

  /** Records which platform messages carry an offer, so reactions and edits can find it. */
  async linkOffer(room: string, offerId: string, messageRefs: string[]): Promise<void> {
    if (messageRefs.length === 0) return;
    const raw = await this.redis.get(this.keys.session(room));
    const session = raw ? this.parseSession(room, raw) : undefined;
    const multi = this.redis.multi();
    if (session) {
      const offer = session.offers.find((o) => o.id === offerId);
      if (offer) offer.messageRefs = [...new Set([...offer.messageRefs, ...messageRefs])];
      multi.set(this.keys.session(room), JSON.stringify(session), "KEEPTTL");
    }
    for (const ref of messageRefs) multi.hset(this.keys.offerRefs(room), ref, offerId);
    multi.expire(this.keys.offerRefs(room), this.options.idleSeconds);
    await multi.exec();
  }

  /** The offer id a platform message carries, if any. */
  async offerByRef(room: string, messageRef: string): Promise<string | null> {
    return this.redis.hget(this.keys.offerRefs(room), messageRef);
  }

  /** The delivery ledger of one turn. */
  ledger(room: string, eventId: string): DeliveryLedger {
    const key = this.keys.ledger(room, eventId);
    return {
      get: (part) => this.redis.hget(key, part),
      set: async (part, ref) => {
        await this.redis.multi().hset(key, part, ref).expire(key, TURN_RECORD_SECONDS).exec();
      },
    };
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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
