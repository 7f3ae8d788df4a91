import type { MatrixClient } from "matrix-bot-sdk";
import type { Receiver } from "../core/adapter.js";
import { registerSecret } from "../core/log.js";
import { UnqueuedEventError } from "../core/unqueued.js";
import { isUnacknowledged } from "../scheduler/durable-write.js";
import { DeviceLeaseLostError } from "./crypto/crypto-errors.js";
import type { CryptoDevice } from "./crypto/crypto-device.js";
import { DeviceStorageProvider } from "./crypto/device-storage.js";
import { InboundDecryption } from "./crypto/inbound-decryption.js";
import { MatrixE2ee, type E2eeParts } from "./crypto/matrix-e2ee.js";
import { isVerificationEvent } from "./crypto/verification.js";
import { EncryptionPolicy } from "./encryption-policy.js";
import { historyOf } from "./history-guard.js";
import { answerInvite } from "./invite-handler.js";
import { EdgeNotices } from "./edge-notices.js";
import { RoomEventSchema, type RoomEvent } from "./matrix-events.js";
import type { MatrixIntake } from "./edge/matrix-intake.js";
import { receiverIntake, type MatrixReceiverOptions } from "./receiver-intake.js";
import { withMatrixRetry } from "./matrix-retry.js";
import { RedisStorageProvider } from "./redis-storage-provider.js";
import { roomBindings, type RoomBinding } from "./room-policy.js";
import { routeSdkLogs } from "./sdk-logging.js";
import { scanJoinedRooms } from "./sync-room-scan.js";
import { SyncingMatrixClient, type SyncHandler } from "./sync-client.js";

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
 * I/O: at most one notice an hour, nothing fetched, queued or stored. Files are read off
 * the sync loop. With encryption, only the process that owns the bot's device syncs
 * (crypto/device-owner.ts): it decrypts encrypted rooms' events, and in an encrypted room
 * reads nothing that came in the clear; the others stand by to take the device over.
 */
export class MatrixReceiver implements Receiver, SyncHandler {
  readonly name = "matrix";
  private readonly bindings: Map<string, RoomBinding>;
  /** Events of the batch in hand that are history (see historyOf). */
  private history = new Set<string>();
  private notices: EdgeNotices | undefined;
  private client: SyncingMatrixClient | undefined;
  private api: MatrixClient | undefined;
  private parts: E2eeParts | undefined;
  private botUserId = "";
  private policy: EncryptionPolicy | undefined;
  private decryption: InboundDecryption | undefined;
  private intake: MatrixIntake | undefined;
  private storage: RedisStorageProvider | undefined;

  constructor(private readonly options: MatrixReceiverOptions) {
    this.bindings = roomBindings(options.config);
    registerSecret(options.config.accessToken);
    routeSdkLogs(options.log);
  }

  /**
   * Connects as the bot and checks the bound rooms it is in; then starts syncing, or
   * with encryption owns the device first (or stands by when another process does).
   * Resolves once the first sync response is handled (or failed, to be retried), or once
   * standing by. A device store that is lost or cannot be decrypted fails the start.
   */
  async start(): Promise<void> {
    const { config, log, redis, keys } = this.options;
    const e2ee = this.options.e2ee ?? new MatrixE2ee(config, log, redis, keys);
    const parts = await e2ee.ready();
    this.parts = parts;
    this.botUserId = parts.userId;
    const api = e2ee.api;
    this.api = api;
    this.storage = new RedisStorageProvider(redis, keys.matrixStorage(this.botUserId));
    if (config.encryption !== "off" && !config.storeKey) {
      log.error(
        "matrix: no matrix.storeKey (MATRIX_STORE_KEY) is set, so encryption cannot start: encrypted rooms are not served",
      );
    }
    this.policy = new EncryptionPolicy(
      config.encryption,
      e2ee.capable,
      e2ee.unavailable(),
      parts.rooms,
      this.storage,
      api,
      log,
    );
    this.notices = new EdgeNotices(api, parts.outbound, redis, keys, log);
    this.intake = await receiverIntake(this.options, {
      api,
      botUserId: this.botUserId,
      bindings: this.bindings,
      policy: this.policy,
      levels: parts.levels,
      notices: this.notices,
    });
    const joined = new Set(await withMatrixRetry("joined rooms", () => api.getJoinedRooms(), log));
    for (const roomId of this.bindings.keys()) {
      if (!joined.has(roomId))
        log.warn({ roomId }, "the Matrix bot is not in this configured room yet: invite it");
    }
    await this.policy.checkAtStart([...this.bindings.keys()].filter((id) => joined.has(id)));
    if (parts.owner)
      await parts.owner.start({ owned: (device) => this.serve(device), lost: () => this.pause() });
    else await this.serve(undefined);
  }

  /** Stops syncing once the batch in hand is handled (giving the device up), and waits for file reads in flight. */
  async stop(): Promise<void> {
    if (this.parts?.owner) await this.parts.owner.stop();
    else await this.pause();
    await this.intake?.drain();
  }

  /** Syncs as the bot: with `device`, as the device's owner (fenced sync token, decryption). */
  private async serve(device: CryptoDevice | undefined): Promise<void> {
    const { config, log, redis, keys } = this.options;
    const parts = this.parts;
    if (!parts || !this.storage) return;
    const owner = parts.owner;
    const storage =
      device && owner
        ? new DeviceStorageProvider(redis, keys.matrixStorage(this.botUserId), owner.store, () => owner.token)
        : this.storage;
    this.decryption =
      device && parts.undecrypted
        ? new InboundDecryption(
            device,
            parts.undecrypted,
            async (roomId, event, history) => this.take(roomId, event, { history, encrypted: true }),
            async (roomId, event, reason, identity) =>
              this.intake?.untrusted(roomId, event, reason, identity),
            log,
          )
        : undefined;
    const client = new SyncingMatrixClient(config.homeserver, config.accessToken, storage, log);
    client.syncingTimeout = this.options.syncTimeoutMs ?? client.syncingTimeout;
    this.client = client;
    client.setSyncHandler(this);
    await client.start(SYNC_FILTER);
    await client.firstBatch;
    await this.decryption?.retryAll();
    log.info(
      { userId: this.botUserId, rooms: this.bindings.size, encryption: device !== undefined },
      "matrix receiver syncing",
    );
  }

  /** Stops syncing (the device was lost, or the process stops). */
  private async pause(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.stopSync();
    this.decryption = undefined;
  }

  /**
   * Scans a sync response before its events: the device takes its to-device messages
   * (room keys), then which events are history, encryption, history visibility,
   * membership and gap power levels in bound rooms, and joined rooms no binding names,
   * which are left.
   */
  async beforeBatch(raw: unknown, initial: boolean): Promise<void> {
    this.history = historyOf(raw, initial, this.botUserId);
    for (const room of scanJoinedRooms(raw)) {
      if (!this.bindings.has(room.roomId)) {
        await this.notices?.leave(room.roomId);
        continue;
      }
      if (room.encryption)
        await this.policy?.encryptionOn(room.roomId, room.encryption, room.historyVisibility);
      else if (room.historyVisibility)
        await this.parts?.rooms.visibility(room.roomId, room.historyVisibility);
      if (room.members) this.parts?.audience.forget(room.roomId);
      if (room.levels) {
        this.parts?.levels.set(room.roomId, room.levels);
      }
    }
    // After the rooms' state: a late key may release an event of a room whose encryption just arrived.
    await this.decryption?.receiveSync(raw);
  }

  /**
   * Handles one sync emission of the SDK, in order. A failure is logged and the event
   * skipped: homeserver calls were already retried, so what is left would fail again
   * and stall the sync on one event. Two are not skipped: a lost device lease ends the
   * sync (sync-client.ts), and Redis not taking the event (refusing writes: MISCONF,
   * OOM; unreachable; too few replicas) fails the batch, which is fetched again from the
   * same token once Redis takes writes: the event waits at the homeserver instead of
   * being lost. Events of the batch already queued are queued once (by event id).
   */
  async emit(type: string, ...payload: unknown[]): Promise<void> {
    const [roomId, event] = payload;
    if (typeof roomId !== "string") return;
    try {
      if (type === "room.invite" && this.api) {
        const inviter = await answerInvite(
          this.api,
          this.bindings.get(roomId),
          roomId,
          event,
          this.options.log,
        );
        if (inviter) await this.takeHistory(roomId, inviter);
      } else if (type === "room.event") await this.onSyncedEvent(roomId, event);
    } catch (err) {
      if (err instanceof DeviceLeaseLostError) throw err;
      if (isUnacknowledged(err)) throw new UnqueuedEventError(roomId, err);
      const eventId = (event as { event_id?: unknown } | null)?.event_id;
      this.options.log.error({ err, type, roomId, eventId }, "matrix event handling failed; event skipped");
    }
  }

  /** In a room joined on an invite, the history the inviter's client shares with the bot (MSC4268). */
  private async takeHistory(roomId: string, inviter: string): Promise<void> {
    const bundles = this.parts?.owner?.bundles;
    if (!bundles) return;
    await bundles
      .joined(roomId, inviter)
      .catch((err: unknown) =>
        this.options.log.warn(
          { err, roomId, inviter },
          "matrix: the inviter's room-key bundle could not be taken",
        ),
      );
  }

  private async onSyncedEvent(roomId: string, raw: unknown): Promise<void> {
    const parsed = RoomEventSchema.safeParse(raw);
    if (!parsed.success) return;
    const history = this.history.has(parsed.data.event_id);
    const encrypted = parsed.data.type === "m.room.encrypted";
    const decryptable = this.bindings.has(roomId) && this.policy?.isEncrypted(roomId) === true;
    if (encrypted && this.decryption && decryptable && parsed.data.sender !== this.botUserId) {
      return this.decryption.handle(roomId, parsed.data, history);
    }
    await this.take(roomId, parsed.data, { history, encrypted: false });
  }

  /** A room event to the intake; in-room verification events (encrypted or not) to the device. */
  private async take(
    roomId: string,
    event: RoomEvent,
    arrival: { history: boolean; encrypted: boolean },
  ): Promise<void> {
    const verifications = this.parts?.owner?.verifications;
    if (verifications && isVerificationEvent(event.type, event.content)) {
      // Element (matrix-js-sdk) sends its request and steps in the clear even in an encrypted room:
      // the SAS MACs and the operator's comparison of the emoji authenticate them, not the room's encryption.
      if (!arrival.history && event.sender !== this.botUserId && this.bindings.has(roomId)) {
        verifications.fromRoom(roomId, event);
      }
      return;
    }
    await this.intake?.receive(roomId, event, arrival);
  }
}
