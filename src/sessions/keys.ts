/**
 * Every Redis key roomgate uses, built in one place (as bullmq's queue-keys). Per-room
 * keys carry the room in a `{hash tag}` so that one room's keys share a Redis
 * Cluster slot. The scheduler's scripts also touch their lane's keys and build room
 * keys from the prefix, so the queue needs one Redis (not a Cluster).
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

  /**
   * The record of the room's head turn while it is being delivered: its event id,
   * outcome, parts sent or being sent, and since when it waits. Deleted once delivered.
   */
  turn(room: string): string {
    return this.room(room, "turn");
  }

  /** Platform message ref → offer id, so a reaction on a sent message finds its offer. */
  offerRefs(room: string): string {
    return this.room(room, "offer-refs");
  }

  /** Marks that a stranger was already refused in this room recently. */
  refused(room: string, userId: string): string {
    return this.room(room, `refused:${userId}`);
  }

  /** A notice of one kind (flood, leaving) already given to one user or room, kept while it must not repeat. */
  notice(room: string, kind: string, userId: string): string {
    return this.room(room, `notice:${kind}:${userId}`);
  }

  /** Turns one person started in the current minute, for inbound flood control (not per room: per person). */
  turnRate(platformUserId: string): string {
    return `${this.prefix}:turn-rate:{${platformUserId}}`;
  }

  /** Platform event ids received in the room lately (zset by Redis ms), so a redelivered event is not enqueued twice. */
  seen(room: string): string {
    return this.room(room, "seen");
  }

  /** A lane's rooms that have events and no holder, by the Redis ms they may run from. */
  pending(lane: string): string {
    return `${this.prefix}:lane:{${lane}}:pending`;
  }

  /** A lane's held rooms, by the Redis ms their lease expires (how a dead worker's rooms are found). */
  running(lane: string): string {
    return `${this.prefix}:lane:{${lane}}:running`;
  }

  /** A lane's wake-up list: idle workers block on it until a room becomes pending. */
  wake(lane: string): string {
    return `${this.prefix}:lane:{${lane}}:wake`;
  }

  /** Turns that could not be delivered by their deadline: id → record JSON. */
  get deadLetters(): string {
    return `${this.prefix}:dead-letters`;
  }

  /** The dead letters' ids by the Redis ms they were recorded. */
  get deadLetterIndex(): string {
    return `${this.prefix}:dead-letters:index`;
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

  /** Telegram: groups one bot saw migrate to a supergroup, old chat id → new chat id (a hash). */
  telegramMigrations(botId: number | string): string {
    return `${this.prefix}:telegram:${botId}:migrations`;
  }

  /** Telegram: the topics a bot made in one private chat, topic name → message_thread_id (a hash). */
  telegramTopics(botId: number | string, chatId: number | string): string {
    return `${this.prefix}:telegram:${botId}:topics:${chatId}`;
  }

  /** Matrix: the bot SDK's storage provider hash (sync token, filter, kv). */
  matrixStorage(userId: string): string {
    return `${this.prefix}:matrix:${userId}:storage`;
  }

  /**
   * Matrix E2EE: the keys of one bot device, under one hash tag so that the fenced
   * scripts (lease check + write) touch one Cluster slot. `lease`: the owner's token;
   * `store`: the encrypted crypto store and the device's sync token; `undecrypted`:
   * events waiting for their room key.
   */
  matrixDevice(userId: string, deviceId: string, what: "lease" | "store" | "undecrypted"): string {
    return `${this.prefix}:{mx-device:${userId}:${deviceId}}:${what}`;
  }

  /** Matrix E2EE: the bound rooms known to be encrypted (encryption is never switched off again). */
  matrixEncryptedRooms(userId: string): string {
    return `${this.prefix}:matrix:${userId}:encrypted-rooms`;
  }

  /** Liveness records of running processes, for /status and health. */
  heartbeat(kind: string, id: string): string {
    return `${this.prefix}:heartbeat:${kind}:${id}`;
  }

  /**
   * The prefix of bullmq's queue of proactive jobs (schedules, unmutes, resource
   * posts): bullmq builds its keys as `<prefix>:<queue>:…`, and the hash tag puts
   * every key of that queue in one Cluster slot, as bullmq's scripts need.
   */
  get bullmqPrefix(): string {
    return `${this.prefix}:{proactive}`;
  }

  /** Since when (ms) some process has been taking proactive jobs; lapses when none has for a while. */
  get proactiveUptime(): string {
    return `${this.prefix}:{proactive}:uptime`;
  }

  /** Until when (Redis ms) the room's proactive turns are held by /mute; expires at that time. */
  mute(room: string): string {
    return this.room(room, "mute");
  }

  /** Proactive events held while the room is muted, oldest first, queued when the mute ends. */
  held(room: string): string {
    return this.room(room, "held");
  }

  /** A hook delivery's signature seen lately → its delivery id, so a replayed signature is refused. */
  hookSignature(hook: string, signature: string): string {
    return `${this.prefix}:hook:{${hook}}:sig:${signature}`;
  }

  /** The MCP task one call of a room's turn started (its task id), so a restarted worker resumes polling it. */
  task(room: string, callKey: string): string {
    return this.room(room, `task:${callKey}`);
  }

  /** Marks that a resource's update for one throttle window was posted (or is due) in the room. */
  resourceWindow(room: string, uri: string, window: number): string {
    return this.room(room, `resource-window:${window}:${uri}`);
  }

  /** A hash of the resource's content as last posted in the room, so an unchanged one is not posted again. */
  resourceSeen(room: string, uri: string): string {
    return this.room(room, `resource-seen:${uri}`);
  }
}
