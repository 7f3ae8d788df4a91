import "../crypto-binding.js";
import type { RedisClient } from "../../sessions/redis-connection.js";
import { MatrixClient } from "matrix-bot-sdk";
import type { MatrixConfig } from "../../core/config.js";
import { registerSecret, type Logger } from "../../core/log.js";
import { Keys } from "../../sessions/keys.js";
import { withMatrixRetry } from "../matrix-retry.js";
import { RoomLevels } from "../room-levels.js";
import { isAllowed, roomBindings } from "../room-policy.js";
import { DeviceIdentity } from "./device-identity.js";
import { DeviceOwner } from "./device-owner.js";
import { EncryptedRooms } from "./encrypted-rooms.js";
import { IdentityApprovals } from "./identity-approvals.js";
import { RoomKeyBundles } from "./key-bundles.js";
import { downloadMedia } from "../media-download.js";
import { OutboundEncryption, type CryptoUnavailable } from "./outbound-encryption.js";
import type { HomeserverCall } from "./outgoing-requests.js";
import { decodeRecoveryKey } from "./recovery-key.js";
import { RoomAudience } from "./room-audience.js";
import { AccountData, SecretStorage } from "./secret-storage.js";
import { UndecryptedEvents } from "./undecrypted-events.js";
import { Verifications } from "./verification.js";
import { VerificationBoard } from "./verification-board.js";

/** The largest room-key bundle downloaded (a room's keys: about half a KiB each). */
const MAX_BUNDLE_BYTES = 32 * 1024 * 1024;
/** How long a bundle's download may take. */
const BUNDLE_DOWNLOAD_MS = 60_000;

/** The E2EE parts of one bot account, once its user and device are known. */
export interface E2eeParts {
  userId: string;
  deviceId: string;
  rooms: EncryptedRooms;
  levels: RoomLevels;
  audience: RoomAudience;
  outbound: OutboundEncryption;
  /** Present when this deployment can encrypt (encryption not off, a store key set). */
  owner?: DeviceOwner;
  undecrypted?: UndecryptedEvents;
}

/**
 * End-to-end encryption for one Matrix bot account, shared by the process's sender and
 * receiver: which rooms are encrypted, who their messages are for, the device (owned by
 * one process at a time) and the plan of every send. Built lazily: the bot's user and
 * device ids come from the homeserver (whoami) on first use.
 */
export class MatrixE2ee {
  readonly api: MatrixClient;
  private parts: Promise<E2eeParts> | undefined;
  private built: E2eeParts | undefined;

  constructor(
    private readonly config: MatrixConfig,
    private readonly log: Logger,
    /** Where the device and the encrypted rooms are kept; without it (a sender on its own) nothing can be encrypted. */
    private readonly redis?: RedisClient,
    private readonly keys: Keys = new Keys("rg"),
  ) {
    registerSecret(config.accessToken);
    registerSecret(config.storeKey);
    registerSecret(config.password);
    registerSecret(config.recoveryKey);
    this.api = new MatrixClient(config.homeserver, config.accessToken);
  }

  /** Whether this deployment can encrypt at all. */
  get capable(): boolean {
    return this.config.encryption !== "off" && this.config.storeKey !== undefined && this.redis !== undefined;
  }

  /** Whether this process owns the bot's device now (and so may run encrypted rooms' turns). */
  get ownsDevice(): boolean {
    return this.built?.owner?.device !== undefined;
  }

  /** Why this process cannot encrypt right now. */
  unavailable(): CryptoUnavailable {
    if (this.config.encryption === "off") return "encryption is off";
    if (!this.config.storeKey) return "no matrix.storeKey is set";
    return "another process owns the device";
  }

  /** The parts, after asking the homeserver once who the bot is. */
  ready(): Promise<E2eeParts> {
    this.parts ??= this.build().then(
      (parts) => (this.built = parts),
      (err: unknown) => {
        this.parts = undefined;
        throw err;
      },
    );
    return this.parts;
  }

  /** Sends a room message the crypto machine asked for (in-room verification), encrypted where the room is. */
  private async sendToRoom(
    outbound: OutboundEncryption,
    roomId: string,
    type: string,
    content: Record<string, unknown>,
    txnId: string,
  ): Promise<unknown> {
    const wire = await (await outbound.plan(roomId)).wire(type, content);
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/${encodeURIComponent(wire.type)}/${encodeURIComponent(txnId)}`;
    return withMatrixRetry(
      "verification message",
      () => this.api.doRequest("PUT", path, null, wire.content),
      this.log,
    );
  }

  private async build(): Promise<E2eeParts> {
    const { config, redis, keys, log } = this;
    const who = await withMatrixRetry("whoami", () => this.api.getWhoAmI(), log);
    const userId = who.user_id;
    const deviceId = who.device_id ?? "";
    const rooms = new EncryptedRooms(this.api, redis, keys.matrixEncryptedRooms(userId), log);
    const levels = new RoomLevels(this.api, log);
    const bindings = roomBindings(config);
    const audience = new RoomAudience(this.api, bindings, levels, () => userId, log);
    const call: HomeserverCall = (method, path, body) =>
      withMatrixRetry(
        `${method} ${path.split("/").slice(3, 5).join("/")}`,
        () => this.api.doRequest(method, path, null, body),
        log,
      );
    const owner: DeviceOwner | undefined =
      this.capable && redis && deviceId !== ""
        ? new DeviceOwner({
            redis,
            keys,
            userId,
            deviceId,
            storeKey: config.storeKey ?? "",
            leaseMs: Math.round(config.deviceLeaseSeconds * 1000),
            call,
            log,
            trust: config.trust,
            verifications: (device): Verifications =>
              new Verifications({
                device,
                call,
                board: new VerificationBoard(
                  redis,
                  keys.matrixOperator(userId, "verify"),
                  keys.matrixOperator(userId, "verify-answers"),
                ),
                sendToRoom: (roomId, type, content, txnId): Promise<unknown> =>
                  this.sendToRoom(outbound, roomId, type, content, txnId),
                mayVerify: (user) =>
                  user === userId || [...bindings.values()].some((b) => isAllowed(b, user, undefined)),
                people: [...bindings.values()].flatMap((b) => (b.users === "anyone" ? [] : [...b.users])),
                log,
              }),
            bundles: (device): RoomKeyBundles =>
              new RoomKeyBundles({
                device,
                call,
                download: (mxc) =>
                  downloadMedia(
                    config.homeserver,
                    config.accessToken,
                    mxc,
                    MAX_BUNDLE_BYTES,
                    AbortSignal.timeout(BUNDLE_DOWNLOAD_MS),
                  ),
                trust: config.trust,
                log,
              }),
            approvals: new IdentityApprovals(redis, keys.matrixOperator(userId, "trust")),
            identity: new DeviceIdentity({
              userId,
              deviceId,
              call,
              secrets: config.recoveryKey
                ? new SecretStorage(
                    new AccountData(call, userId),
                    decodeRecoveryKey(config.recoveryKey),
                    userId,
                  )
                : undefined,
              auth: { userId, password: () => Promise.resolve(config.password) },
              log,
            }),
          })
        : undefined;
    const outbound: OutboundEncryption = new OutboundEncryption({
      api: this.api,
      rooms,
      audience,
      device: () => owner?.device,
      unavailable: () => this.unavailable(),
      log,
    });
    const undecrypted =
      owner && redis
        ? new UndecryptedEvents(redis, keys.matrixDevice(userId, deviceId, "undecrypted"), log)
        : undefined;
    return { userId, deviceId, rooms, levels, audience, outbound, ...(owner ? { owner, undecrypted } : {}) };
  }
}
