import type { Redis } from "ioredis";
import { MatrixClient } from "matrix-bot-sdk";
import type { Inbox, Receiver } from "../core/adapter.js";
import type { EditsConfig, MatrixConfig } from "../core/config.js";
import { registerSecret, type Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import { classifyEvent } from "./classify-event.js";
import { EditReview } from "./edit-review.js";
import { EncryptionNotice } from "./encryption-notice.js";
import { HistoryGuard } from "./history-guard.js";
import { InboundBuilder } from "./inbound-builder.js";
import {
  PowerLevelsSchema,
  RoomEventSchema,
  SyncJoinedRoomsSchema,
  type PowerLevels,
} from "./matrix-events.js";
import { withMatrixRetry } from "./matrix-retry.js";
import { MentionGate } from "./mention-gate.js";
import { MessageAdmission } from "./message-admission.js";
import { RedisStorageProvider } from "./redis-storage-provider.js";
import { isAllowed, mayInvite, roomBindings, type RoomBinding } from "./room-policy.js";
import { routeSdkLogs } from "./sdk-logging.js";
import { SyncingMatrixClient, type SyncHandler } from "./sync-client.js";

/** What the Matrix receiver needs from the runtime. */
export interface MatrixReceiverOptions {
  config: MatrixConfig;
  maxFileBytes: number;
  redis: Redis;
  keys: Keys;
  inbox: Inbox;
  log: Logger;
  /** Long-poll timeout of each sync request. */
  syncTimeoutMs?: number;
  /** What an edited message does (default: logged, not asked again). */
  edits?: EditsConfig;
}

/**
 * The sync filter: no presence or account data, and a bounded timeline so an initial
 * sync of a busy room stays small. Kept constant: the SDK forgets the sync token
 * whenever the filter changes.
 */
const SYNC_FILTER = {
  presence: { types: [] },
  account_data: { types: [] },
  room: { timeline: { limit: 50 }, ephemeral: { types: [] }, account_data: { types: [] } },
};

/**
 * The receiving half of the Matrix adapter: syncs the bot account, accepts invites to
 * configured rooms from allowed inviters only, and enqueues what allowed and unknown
 * people write in bound rooms, never the bot's own events, other bots' notices or a
 * room's history. An encrypted bound room gets one notice and is not read.
 */
export class MatrixReceiver implements Receiver, SyncHandler {
  private readonly bindings: Map<string, RoomBinding>;
  private readonly guard: HistoryGuard;
  private readonly levels = new Map<string, PowerLevels>();
  private client: SyncingMatrixClient | undefined;
  private botUserId = "";
  private notice: EncryptionNotice | undefined;
  private builder: InboundBuilder | undefined;
  private admission: MessageAdmission | undefined;

  constructor(private readonly options: MatrixReceiverOptions) {
    this.bindings = roomBindings(options.config);
    this.guard = new HistoryGuard(options.redis, options.keys);
    registerSecret(options.config.accessToken);
    routeSdkLogs(options.log);
  }

  /**
   * Connects as the bot, checks the bound rooms it is in, and starts syncing;
   * resolves once the first sync response is handled (or failed, to be retried).
   */
  async start(): Promise<void> {
    const { config, log } = this.options;
    const probe = new MatrixClient(config.homeserver, config.accessToken);
    this.botUserId = await withMatrixRetry("whoami", () => probe.getUserId(), log);
    const storage = new RedisStorageProvider(
      this.options.redis,
      this.options.keys.matrixStorage(this.botUserId),
    );
    const client = new SyncingMatrixClient(config.homeserver, config.accessToken, storage, log);
    client.syncingTimeout = this.options.syncTimeoutMs ?? client.syncingTimeout;
    this.client = client;
    this.notice = new EncryptionNotice(client, storage, log);
    this.builder = new InboundBuilder(client, this.botUserId, this.options.maxFileBytes, log);
    const gate = new MentionGate(client, this.botUserId, log);
    await gate.learnName();
    const edits = new EditReview(client, this.options.edits ?? { reask: false, windowSeconds: 120 }, log);
    this.admission = new MessageAdmission(gate, edits, log);
    const joined = new Set(await withMatrixRetry("joined rooms", () => client.getJoinedRooms(), log));
    const encrypted: string[] = [];
    for (const roomId of this.bindings.keys()) {
      if (!joined.has(roomId))
        log.warn({ roomId }, "the Matrix bot is not in this configured room yet: invite it");
      else if (await this.notice.check(roomId)) {
        encrypted.push(roomId);
        await this.notice.encrypted(roomId);
      }
    }
    // Every start says which bound rooms the bot cannot read, not only the first time.
    if (encrypted.length > 0) {
      log.error(
        { rooms: encrypted },
        "matrix: these bound rooms are end-to-end encrypted and will not be answered",
      );
    }
    client.setSyncHandler(this);
    await client.start(SYNC_FILTER);
    await client.firstBatch;
    log.info({ userId: this.botUserId, rooms: this.bindings.size }, "matrix receiver syncing");
  }

  /** Stops syncing once the batch in hand is handled. */
  async stop(): Promise<void> {
    await this.client?.stopSync();
  }

  /** Scans a sync response before its events: encryption anywhere in a bound room, and history floors. */
  async beforeBatch(raw: unknown, initial: boolean): Promise<void> {
    const sync = SyncJoinedRoomsSchema.safeParse(raw);
    for (const [roomId, room] of Object.entries(sync.success ? sync.data.rooms.join : {})) {
      if (!this.bindings.has(roomId)) continue;
      const events = [...(room.state?.events ?? []), ...(room.timeline?.events ?? [])]
        .map((e) => RoomEventSchema.safeParse(e))
        .flatMap((e) => (e.success ? [e.data] : []));
      if (events.some((e) => e.type === "m.room.encryption" && e.state_key === "")) {
        await this.notice?.encrypted(roomId);
      }
      if ((await this.guard.floor(roomId)) !== null) continue;
      const ownJoin = events.find(
        (e) =>
          e.type === "m.room.member" && e.state_key === this.botUserId && e.content.membership === "join",
      );
      // Everything the bot could see before it was there, or before its first sync, is history.
      if (initial && events.length > 0) {
        await this.guard.initialise(roomId, Math.max(...events.map((e) => e.origin_server_ts)) + 1);
      } else if (ownJoin) {
        await this.guard.initialise(roomId, ownJoin.origin_server_ts);
      }
    }
  }

  /**
   * Handles one sync emission of the SDK, in order. A failure is logged and the event
   * skipped: homeserver calls were already retried and Redis commands wait for a
   * reconnect, so what is left would fail again and stall the sync on one event.
   */
  async emit(type: string, ...payload: unknown[]): Promise<void> {
    const [roomId, event] = payload;
    if (typeof roomId !== "string") return;
    try {
      if (type === "room.invite") await this.onInvite(roomId, event);
      else if (type === "room.event") await this.onRoomEvent(roomId, event);
    } catch (err) {
      const eventId = (event as { event_id?: unknown } | null)?.event_id;
      this.options.log.error({ err, type, roomId, eventId }, "matrix event handling failed; event skipped");
    }
  }

  private async onInvite(roomId: string, raw: unknown): Promise<void> {
    const client = this.client;
    const inviter = (raw as { sender?: unknown } | null)?.sender;
    if (!client || typeof inviter !== "string") return;
    const binding = this.bindings.get(roomId);
    const log = this.options.log.child({ roomId, inviter });
    if (!mayInvite(binding, inviter)) {
      log.warn(
        binding
          ? "invite from a user who may not invite the bot; declined"
          : "invite to an unconfigured room; declined",
      );
      await withMatrixRetry("decline invite", () => client.leaveRoom(roomId), log).catch((err: unknown) =>
        log.warn({ err }, "could not decline the invite"),
      );
      return;
    }
    await withMatrixRetry("join", () => client.joinRoom(roomId), log);
    log.info("joined configured room on invite");
  }

  private async onRoomEvent(roomId: string, raw: unknown): Promise<void> {
    const binding = this.bindings.get(roomId);
    const parsed = RoomEventSchema.safeParse(raw);
    if (!binding || !parsed.success || this.notice?.isEncrypted(roomId)) return;
    const event = parsed.data;
    const log = this.options.log.child({ roomId, eventId: event.event_id });
    const classified = classifyEvent(event, {
      botUserId: this.botUserId,
      maxFileBytes: this.options.maxFileBytes,
    });
    switch (classified.type) {
      case "ignore":
        log.debug({ reason: classified.reason }, "matrix event ignored");
        return;
      case "encrypted":
        // An encrypted event in a room whose state says it is not encrypted is just unreadable:
        // anyone could send one, and it must not silence the bot.
        if (event.type === "m.room.encryption" || (await this.notice?.check(roomId))) {
          await this.notice?.encrypted(roomId);
        }
        return;
      case "power-levels":
        this.levels.set(roomId, classified.levels);
        return;
    }
    if (await this.guard.isHistory(roomId, event.origin_server_ts)) {
      log.debug("matrix event older than the room's last handled event; not answered");
      return;
    }
    const admitted = await this.admission?.admit(binding, event, classified);
    if (!admitted) return this.guard.handled(roomId, event.origin_server_ts);
    const allowed = isAllowed(binding, event.sender, await this.powerLevels(binding));
    const inbound = await this.builder?.build(binding, event, admitted, allowed);
    if (inbound) {
      const fresh = await this.options.inbox.enqueue(inbound);
      log.debug({ kind: inbound.kind, allowed, fresh }, "matrix event enqueued");
    }
    await this.guard.handled(roomId, event.origin_server_ts);
  }

  /** The room's power levels when its binding uses them, read once and then kept current from sync. */
  private async powerLevels(binding: RoomBinding): Promise<PowerLevels | undefined> {
    if (binding.powerLevel === undefined || !this.client) return undefined;
    const known = this.levels.get(binding.roomId);
    if (known) return known;
    const client = this.client;
    try {
      const content: unknown = await withMatrixRetry(
        "power levels",
        () => client.getRoomStateEvent(binding.roomId, "m.room.power_levels", ""),
        this.options.log,
      );
      const levels = PowerLevelsSchema.parse(content ?? {});
      this.levels.set(binding.roomId, levels);
      return levels;
    } catch (err) {
      // Without the levels only the listed users are allowed; the next event asks again.
      this.options.log.warn({ err, roomId: binding.roomId }, "cannot read the room's power levels");
      return undefined;
    }
  }
}
