import { RoomShards } from "../scheduler/room-shards.js";

/**
 * The Redis keys of everything but the scheduler (whose keys only src/scheduler builds
 * and reads): the platforms, permissions, audit and proactive jobs, and the per-room
 * keys below, kept in their room's shard (src/scheduler/room-shards.ts).
 */
export class Keys {
  private readonly rooms: RoomShards;

  constructor(
    readonly prefix: string,
    options: { shards?: number } = {},
  ) {
    this.rooms = new RoomShards(prefix, options);
  }

  /** How many shards the rooms are spread over (`queue.shards`). */
  get shards(): number {
    return this.rooms.shards;
  }

  /** A key of one room, in its shard's hash slot. */
  private ofRoom(room: string, what: string): string {
    return this.rooms.ofRoom(room, what);
  }

  /** A notice of one kind (a stranger's refusal, the bot leaving) already given to a user or room, kept while it must not repeat. */
  notice(room: string, kind: string, userId: string): string {
    return this.ofRoom(room, `notice:${kind}:${userId}`);
  }

  /** Marks that a stranger was already refused in this room recently. */
  refused(room: string, userId: string): string {
    return this.ofRoom(room, `refused:${userId}`);
  }

  /** Telegram: the next update offset of one bot, so a restart neither replays nor loses updates. */
  telegramOffset(botId: number | string): string {
    return `${this.prefix}:telegram:${botId}:offset`;
  }

  /**
   * Telegram: updates of one bot confirmed to Telegram before their room's shard could
   * take them (a Cluster slot range down), update id → update JSON; one hash per shard
   * tag, so that some of them live in a range that is up (src/telegram/update-aside.ts).
   */
  telegramAside(botId: number | string, shard: number): string {
    return `${this.prefix}:{${this.rooms.tag(shard)}}:telegram:${botId}:aside`;
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

  /**
   * Matrix E2EE, operator to device owner: `trust`, the new identities (master keys) the
   * operator approved per user (`roomgate matrix trust`); `verify`, the emoji verifications
   * waiting for the operator and the operator's answers.
   */
  matrixOperator(userId: string, what: "trust" | "verify" | "verify-answers"): string {
    return `${this.prefix}:matrix:${userId}:${what}`;
  }

  /** Matrix E2EE: the bound rooms known to be encrypted (encryption is never switched off again). */
  matrixEncryptedRooms(userId: string): string {
    return `${this.prefix}:matrix:${userId}:encrypted-rooms`;
  }

  /** Liveness records of running processes, for /status and health. */
  heartbeat(kind: string, id: string): string {
    return `${this.prefix}:heartbeat:${kind}:${id}`;
  }

  // Permissions (issue 16): each key below is used alone or with keys of its own hash tag.

  /** A pairing code waiting to be used, by the SHA-256 of the code (the code itself is never stored). */
  pairingCode(codeHash: string): string {
    return `${this.prefix}:pairing:{${codeHash}}`;
  }

  /** Wrong pairing codes one sender tried lately (a counter with its window's expiry). */
  pairingFailures(senderId: string): string {
    return `${this.prefix}:pairing-failures:{${senderId}}`;
  }

  /** The users `/pair` added to one binding: sender id → JSON record. */
  pairedUsers(binding: string): string {
    return `${this.prefix}:{paired}:users:${binding}`;
  }

  /** Bumped whenever a binding's paired users change, so every process reloads them. */
  get pairedVersion(): string {
    return `${this.prefix}:{paired}:version`;
  }

  /** The audit trail: a stream of approvals, pairings and destructive calls, trimmed by age. */
  get auditTrail(): string {
    return `${this.prefix}:{audit}:trail`;
  }

  /** Approvals waiting for a decision, by the ms they expire (so an expiry is recorded too). */
  get openApprovals(): string {
    return `${this.prefix}:{audit}:open-approvals`;
  }

  /** What the trail records of each waiting approval when it expires: approval id → JSON. */
  get openApprovalInfo(): string {
    return `${this.prefix}:{audit}:open-approval-info`;
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
    return this.ofRoom(room, "mute");
  }

  /** Proactive events held while the room is muted (a hash: event id → event), queued when the mute ends. */
  held(room: string): string {
    return this.ofRoom(room, "held-events");
  }

  /** A hook delivery's signature seen lately → its delivery id, so a replayed signature is refused. */
  hookSignature(hook: string, signature: string): string {
    return `${this.prefix}:hook:{${hook}}:sig:${signature}`;
  }

  /** The MCP task one call of a room's turn started (its task id), so a restarted worker resumes polling it. */
  task(room: string, callKey: string): string {
    return this.ofRoom(room, `task:${callKey}`);
  }

  /** Marks that a resource's update for one throttle window was posted (or is due) in the room. */
  resourceWindow(room: string, uri: string, window: number): string {
    return this.ofRoom(room, `resource-window:${window}:${uri}`);
  }

  /** A hash of the resource's content as last posted in the room, so an unchanged one is not posted again. */
  resourceSeen(room: string, uri: string): string {
    return this.ofRoom(room, `resource-seen:${uri}`);
  }
}
