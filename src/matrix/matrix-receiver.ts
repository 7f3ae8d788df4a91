import type { Redis } from "ioredis";
import { MatrixClient } from "matrix-bot-sdk";
import type { Inbox, Receiver } from "../core/adapter.js";
import type { EditsConfig, MatrixConfig } from "../core/config.js";
import { registerSecret, type Logger } from "../core/log.js";
import type { Keys } from "../sessions/keys.js";
import { matrixRoom } from "../core/room.js";
import type { FloodGate } from "../edge/flood-gate.js";
import { pairingCodeIn, type PairingGate } from "../edge/pairing-gate.js";
import { refusalsTotal } from "../ops/metrics.js";
import { classifyEvent } from "./classify-event.js";
import { EditReview } from "./edit-review.js";
import { EncryptionNotice } from "./encryption-notice.js";
import { historyOf } from "./history-guard.js";
import { InboundBuilder } from "./inbound-builder.js";
import { MediaReader } from "./media-reader.js";
import { EdgeNotices } from "./edge-notices.js";
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
  /** Longest a file download may take. */
  fileTimeoutMs?: number;
  /** Inbound flood control; without it nothing is limited. */
  flood?: FloodGate;
  redis: Redis;
  keys: Keys;
  inbox: Inbox;
  log: Logger;
  /** Long-poll timeout of each sync request. */
  syncTimeoutMs?: number;
  /** What an edited message does (default: logged, not asked again). */
  edits?: EditsConfig;
  /** Users `/pair` added to the rooms' bindings. */
  paired?: (binding: string, senderId: string) => boolean;
  /** `/pair <code>`, taken at the edge before the allowlist. */
  pairing?: PairingGate;
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
 * configured rooms from allowed inviters only, leaves rooms no binding names (with one
 * notice), and enqueues what allowed people write in bound rooms, never the bot's own
 * events, other bots' notices or a room's history. A stranger is refused before any other
 * I/O: at most one notice an hour, nothing fetched, queued or stored. An encrypted bound
 * room gets one notice and is not read. Files are read off the sync loop.
 */
export class MatrixReceiver implements Receiver, SyncHandler {
  private readonly bindings: Map<string, RoomBinding>;
  private readonly levels = new Map<string, PowerLevels>();
  /** Events of the batch in hand that are history (see historyOf). */
  private history = new Set<string>();
  /** File reads in flight, one chain per room so that a room's files keep their order. */
  private readonly reads = new Map<string, Promise<void>>();
  private notices: EdgeNotices | undefined;
  private client: SyncingMatrixClient | undefined;
  private botUserId = "";
  private notice: EncryptionNotice | undefined;
  private builder: InboundBuilder | undefined;
  private admission: MessageAdmission | undefined;

  constructor(private readonly options: MatrixReceiverOptions) {
    this.bindings = roomBindings(options.config);
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
    const media = new MediaReader(
      config.homeserver,
      config.accessToken,
      this.options.maxFileBytes,
      this.options.fileTimeoutMs ?? 20_000,
      log,
    );
    this.builder = new InboundBuilder(client, this.botUserId, media, log);
    this.notices = new EdgeNotices(client, this.options.redis, this.options.keys, log);
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

  /** Stops syncing once the batch in hand is handled, and waits for file reads in flight. */
  async stop(): Promise<void> {
    await this.client?.stopSync();
    await Promise.all(this.reads.values());
  }

  /**
   * Scans a sync response before its events: which of them are history, encryption
   * anywhere in a bound room, power levels in the rooms' state, and joined rooms no
   * binding names, which are left.
   */
  async beforeBatch(raw: unknown, initial: boolean): Promise<void> {
    this.history = historyOf(raw, initial, this.botUserId);
    const sync = SyncJoinedRoomsSchema.safeParse(raw);
    for (const [roomId, room] of Object.entries(sync.success ? sync.data.rooms.join : {})) {
      if (!this.bindings.has(roomId)) {
        await this.notices?.leave(roomId);
        continue;
      }
      const state = (room.state?.events ?? [])
        .map((e) => RoomEventSchema.safeParse(e))
        .flatMap((e) => (e.success ? [e.data] : []));
      const timeline = (room.timeline?.events ?? [])
        .map((e) => RoomEventSchema.safeParse(e))
        .flatMap((e) => (e.success ? [e.data] : []));
      if ([...state, ...timeline].some((e) => e.type === "m.room.encryption" && e.state_key === "")) {
        await this.notice?.encrypted(roomId);
      }
      // Levels in the state section changed outside the timeline (a gap); timeline ones apply in order.
      const levels = state.findLast((e) => e.type === "m.room.power_levels" && e.state_key === "");
      const parsed = levels ? PowerLevelsSchema.safeParse(levels.content) : undefined;
      if (parsed?.success) this.levels.set(roomId, parsed.data);
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
    if (this.history.has(event.event_id)) {
      log.debug("matrix event from before the bot was there; not answered");
      return;
    }
    const code = classified.type === "message" ? pairingCodeIn(classified.text) : undefined;
    if (code !== undefined && this.options.pairing) {
      const reply = await this.options.pairing.redeem(
        { senderId: event.sender, room: matrixRoom(roomId), accepts: (name) => name === binding.name },
        code,
      );
      if (reply) await this.notices?.say(roomId, event.event_id, event.sender, reply);
      return;
    }
    const allowed = isAllowed(binding, event.sender, await this.powerLevels(binding), this.options.paired);
    if (!allowed) {
      // A stranger's chatter not addressed to the bot is ignored without a word, and without I/O.
      if (!this.admission?.addressedOffline(binding, event, classified)) return;
      if (this.notices?.logOnce(event.sender)) {
        log.info(
          { sender: event.sender },
          "matrix sender not allowed in this room; refused (logged once an hour)",
        );
      }
      refusalsTotal.inc({ platform: "matrix" });
      // A reaction gets no answer, so a stranger cannot make the bot post at will.
      if (classified.type !== "reaction") await this.notices?.refuse(roomId, event.event_id, event.sender);
      return;
    }
    const admitted = await this.admission?.admit(binding, event, classified);
    if (!admitted) return;
    const flood = this.options.flood;
    const refused = async (notice: string | undefined): Promise<void> => {
      if (notice) await this.notices?.say(roomId, event.event_id, event.sender, notice);
    };
    // A file is downloaded and a reaction's target fetched only once admitted, so their
    // flood check comes first, on its own; a message is checked in its enqueue's round trip.
    const checkedInEnqueue = flood !== undefined && admitted.type === "message";
    if (flood && !checkedInEnqueue) {
      const verdict = await flood.check(matrixRoom(roomId), event.sender);
      if (!verdict.admit) return refused(verdict.notice);
    }
    const enqueue = async (): Promise<void> => {
      const inbound = await this.builder?.build(binding, event, admitted, true);
      if (!inbound) return;
      if (!flood || !checkedInEnqueue) {
        const fresh = await this.options.inbox.enqueue(inbound);
        log.debug({ kind: inbound.kind, fresh }, "matrix event enqueued");
        return;
      }
      const queued = await flood.enqueue(this.options.inbox, inbound, event.sender);
      if (!queued.admit) return refused(queued.notice);
      log.debug({ kind: inbound.kind, fresh: queued.fresh }, "matrix event enqueued");
    };
    if (admitted.type === "file") this.readLater(roomId, enqueue);
    else await enqueue();
  }

  private readLater(roomId: string, task: () => Promise<void>): void {
    const next = (this.reads.get(roomId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => this.options.log.error({ err, roomId }, "a Matrix file could not be queued"))
      .finally(() => {
        if (this.reads.get(roomId) === next) this.reads.delete(roomId);
      });
    this.reads.set(roomId, next);
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
