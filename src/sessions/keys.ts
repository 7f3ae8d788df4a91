/**
 * Every Redis key roomgate uses, built in one place (bullmq's queue-keys). Per-room
 * keys carry the room in a `{hash tag}` so that one room's keys share a Redis
 * Cluster slot and can be changed together in one MULTI or Lua script.
 */
export class Keys {
  constructor(readonly prefix: string) {}

  private room(room: string, what: string): string {
    return `${this.prefix}:{${room}}:${what}`;
  }

  /** The room's session record (conversation, enabled tools, offers, slot state). */
  session(room: string): string {
    return this.room(room, "session");
  }

  /** The room's capped list of recent turns. */
  history(room: string): string {
    return this.room(room, "history");
  }

  /** The room's FIFO of inbound events not yet fully handled. */
  inbox(room: string): string {
    return this.room(room, "inbox");
  }

  /** The lease a worker holds while it drains the room's inbox. */
  lease(room: string): string {
    return this.room(room, "lease");
  }

  /** Outcome of one turn, kept so that a retried turn is delivered, not recomputed. */
  outcome(room: string, eventId: string): string {
    return this.room(room, `outcome:${eventId}`);
  }

  /** What was already sent for one turn: part key → platform message ref. */
  ledger(room: string, eventId: string): string {
    return this.room(room, `ledger:${eventId}`);
  }

  /** Platform message ref → offer id, so a reaction on a sent message finds its offer. */
  offerRefs(room: string): string {
    return this.room(room, "offer-refs");
  }

  /** Marks that a stranger was already refused in this room recently. */
  refused(room: string, userId: string): string {
    return this.room(room, `refused:${userId}`);
  }

  /** The last handled platform timestamp in a room (Matrix history guard). */
  lastSeen(room: string): string {
    return this.room(room, "last-seen");
  }

  /** Marks a platform event id as received in its room, so a redelivered event is not enqueued twice. */
  dedupe(room: string, eventId: string): string {
    return this.room(room, `dedupe:${eventId}`);
  }

  /** The room's stream of recent inbound events from allowed users, read by a running turn (cancel, elicitation answers). */
  side(room: string): string {
    return this.room(room, "side");
  }

  /** Marks an inbound event a running turn already took out of band, so its own turn stays silent. */
  consumed(room: string, eventId: string): string {
    return this.room(room, `consumed:${eventId}`);
  }

  /** Pattern matching every room inbox, for the sweeper that re-kicks forgotten rooms. */
  get inboxPattern(): string {
    return `${this.prefix}:{*}:inbox`;
  }

  /**
   * Name of the bullmq queue of room kicks for one platform queue; a shell session
   * gets its own, since only its own process can print to its terminal.
   */
  turnQueue(lane: string): string {
    return `turns-${lane}`;
  }

  /** Prefix passed to bullmq so its keys live under ours. */
  get bullPrefix(): string {
    return `${this.prefix}:bull`;
  }

  /**
   * A sliding-window send limiter's sorted set; `group` (e.g. one bot) is the hash
   * tag, so all scopes of one bot can be checked in one script.
   */
  rate(group: string, scope: string): string {
    return `${this.prefix}:rate:{${group}}:${scope}`;
  }

  /** Telegram: the next update offset of one bot, so a restart neither replays nor loses updates. */
  telegramOffset(botId: number | string): string {
    return `${this.prefix}:telegram:${botId}:offset`;
  }

  /** Telegram: a hash of the command list last registered with setMyCommands. */
  telegramCommands(botId: number | string): string {
    return `${this.prefix}:telegram:${botId}:commands`;
  }

  /** Matrix: the bot SDK's storage provider hash (sync token, filter, kv). */
  matrixStorage(userId: string): string {
    return `${this.prefix}:matrix:${userId}:storage`;
  }

  /** Liveness records of running processes, for /status and health. */
  heartbeat(kind: string, id: string): string {
    return `${this.prefix}:heartbeat:${kind}:${id}`;
  }
}
