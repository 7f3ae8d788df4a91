import {
  DeviceId,
  OlmMachine,
  RoomId,
  RoomMessageRequest,
  UserId,
  type RequestType,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";
import { DeviceDatabase, type DeviceDatabaseOptions, type IdentityKeys } from "./device-database.js";
import { sendMachineRequest } from "./outgoing-requests.js";
import { encryptionSettings, type RoomCryptoSettings } from "./room-settings.js";
import {
  SenderTrust,
  type DecryptedEvent,
  type EncryptedRoomEvent,
  type PinApprovals,
} from "./sender-trust.js";
import type { TrustMode } from "./trust-policy.js";
import { loadCrypto, syncCryptoParts, wasmError } from "./wasm-crypto.js";

/** A room key the machine learnt: events of this session in this room can be decrypted now. */
export interface ArrivedRoomKey {
  roomId: string;
  sessionId: string;
}

/** A to-device message the machine processed (in the clear or decrypted): verification requests among them. */
export interface ToDeviceMessage {
  type: string;
  sender: string;
  content: Record<string, unknown>;
}

const ToDeviceMessageSchema = z.object({
  type: z.string(),
  sender: z.string(),
  content: z.record(z.string(), z.unknown()),
});

/** What opening the device needs: its database's, and whom it trusts. */
export interface CryptoDeviceOptions extends DeviceDatabaseOptions {
  /** Whose devices get the bot's room keys and whose messages are read (default `cross-signed`). */
  trust?: TrustMode;
  /** New identities the operator approved (`roomgate matrix trust`), applied when the person is next seen. */
  approvals?: PinApprovals;
}

/**
 * The bot's Matrix device: the crypto machine of matrix-rust-sdk (its wasm build) with
 * its store held in Redis. Every operation runs one at a time, and whatever changes the
 * store (keys received, sessions created, a message encrypted) is sealed and written to
 * Redis, fenced by the device lease, before its result is used: an encrypted message
 * is only ever sent after the session state that produced it is safe.
 */
export class CryptoDevice {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly keyListeners: ((keys: ArrivedRoomKey[]) => void)[] = [];
  private readonly toDeviceListeners: ((messages: ToDeviceMessage[]) => void)[] = [];
  private readonly roomRequestListeners: ((request: RoomMessageRequest) => void)[] = [];
  /** Room messages the machine asked for that a listener is sending (they stay queued until marked sent). */
  private readonly roomRequestsInFlight = new Set<string>();
  private closed = false;
  private readonly trust: SenderTrust;

  private constructor(
    private readonly machine: OlmMachine,
    private readonly options: CryptoDeviceOptions,
    private readonly database: DeviceDatabase,
  ) {
    this.trust = new SenderTrust({
      machine,
      trust: options.trust ?? "cross-signed",
      approvals: options.approvals,
      call: options.call,
      log: options.log,
      persist: () => this.persist(),
    });
    machine.registerRoomKeyUpdatedCallback(async (infos) => {
      const keys = infos.map((i) => ({ roomId: i.roomId.toString(), sessionId: i.sessionId }));
      for (const listener of this.keyListeners) listener(keys);
    });
  }

  /**
   * Opens the device: from its store in Redis when there is one (the same identity
   * keys as before, checked), or as a brand-new device when the homeserver has no keys
   * for this device id either. Keys on the homeserver without a store is an error
   * (LostCryptoStoreError), never a silent new identity. The new store is written
   * before any key is uploaded.
   */
  static async open(options: CryptoDeviceOptions): Promise<CryptoDevice> {
    await loadCrypto();
    const { userId, deviceId, log } = options;
    const database = await DeviceDatabase.open(options);
    const loaded = database.loaded;
    const machine = await OlmMachine.initialize(
      new UserId(userId),
      new DeviceId(deviceId),
      database.name,
    ).catch((err: unknown) => Promise.reject(wasmError(err)));
    const device = new CryptoDevice(machine, options, database);
    try {
      if (loaded) {
        database.checkIdentity(device.identityKeys);
        log.info(
          { deviceId, ed25519: device.identityKeys.ed25519, generation: loaded.meta.generation },
          "matrix: device keys loaded from Redis",
        );
      } else {
        await device.exclusive(() => device.persist());
        log.warn(
          { deviceId, ed25519: device.identityKeys.ed25519 },
          "matrix: created the device's keys (a new device)",
        );
      }
      await device.exclusive(async () => {
        // A store in the older format is written again at once, each field bound to its version.
        if ((await device.flush()) || loaded?.legacy) await device.persist();
      });
    } catch (err) {
      await device.close();
      throw err;
    }
    return device;
  }

  /** The device's public identity keys (base64), as other clients see them. */
  get identityKeys(): IdentityKeys {
    const keys = this.machine.identityKeys;
    return { curve25519: keys.curve25519.toBase64(), ed25519: keys.ed25519.toBase64() };
  }

  /** Calls `listener` with the room keys of each batch the machine learns (to-device m.room_key, forwards). */
  onRoomKeys(listener: (keys: ArrivedRoomKey[]) => void): void {
    this.keyListeners.push(listener);
  }

  /** Calls `listener` with the to-device messages of each sync (it must only schedule work: the device is busy). */
  onToDevice(listener: (messages: ToDeviceMessage[]) => void): void {
    this.toDeviceListeners.push(listener);
  }

  /**
   * Calls `listener` with each room message the machine asks to send (in-room
   * verification); the listener sends it through the room's encryption and reports the
   * answer with `markSent`.
   */
  onRoomRequest(listener: (request: RoomMessageRequest) => void): void {
    this.roomRequestListeners.push(listener);
  }

  /** Reports the homeserver's answer to a request sent outside the device (a room message), and saves. */
  async markSent(id: string, type: RequestType, answer: unknown): Promise<void> {
    await this.exclusive(async () => {
      this.roomRequestsInFlight.delete(id);
      await this.machine.markRequestAsSent(id, type, JSON.stringify(answer ?? {}));
      await this.flush();
      await this.persist();
    });
  }

  /**
   * Feeds one sync response's crypto parts to the machine (to-device messages, device
   * list changes, one-time-key counts), sends what the machine asks for, and saves the
   * store when anything changed; the sync token may be stored only after this.
   */
  async receiveSync(raw: unknown): Promise<void> {
    const sync = syncCryptoParts(raw);
    await this.exclusive(async () => {
      const processed = await this.machine
        .receiveSyncChanges(sync.toDevice, sync.lists, sync.keyCounts, sync.fallbackKeys)
        .catch((err: unknown) => Promise.reject(wasmError(err)));
      const messages: ToDeviceMessage[] = [];
      for (const event of processed) {
        const raw = "rawEvent" in event ? event.rawEvent : undefined;
        const parsed = raw === undefined ? undefined : ToDeviceMessageSchema.safeParse(JSON.parse(raw));
        if (parsed?.success) messages.push(parsed.data);
      }
      if (messages.length > 0) for (const listener of this.toDeviceListeners) listener(messages);
      const sent = await this.flush();
      if (sent || sync.changes) await this.persist();
    });
  }

  /**
   * Decrypts a room event as `matrix.trust` says (sender-trust.ts); throws
   * UndecryptableEventError saying why not.
   */
  async decrypt(roomId: string, event: EncryptedRoomEvent): Promise<DecryptedEvent> {
    return this.exclusive(() => this.trust.decrypt(roomId, event));
  }

  /**
   * Runs `task` on the machine, alone, then sends what it queued and saves the store;
   * `save` writes the store at once, for a step that must be safe before the next
   * (private keys before their public halves are uploaded).
   */
  async run<T>(task: (machine: OlmMachine, save: () => Promise<void>) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      try {
        const result = await task(this.machine, () => this.persist());
        await this.flush();
        await this.persist();
        return result;
      } catch (err) {
        throw wasmError(err);
      }
    });
  }

  /**
   * Encrypts an event for a room: makes sure every device of `recipients` has the
   * bot's current room key (learning new devices, claiming one-time keys, rotating the
   * session when the room's settings or a departed device say so), encrypts, and saves
   * the store before returning the `m.room.encrypted` content.
   */
  async encrypt(
    roomId: string,
    type: string,
    content: Record<string, unknown>,
    recipients: readonly string[],
    settings: RoomCryptoSettings,
  ): Promise<Record<string, unknown>> {
    const trust = this.options.trust ?? "cross-signed";
    return this.exclusive(async () => {
      try {
        // wasm-bindgen takes ownership of the ids passed in: every call gets fresh ones.
        await this.machine.updateTrackedUsers(recipients.map((u) => new UserId(u)));
        await this.flush();
        // A person whose pinned identity changed gets no room key until the operator re-pins it.
        const kept = await this.trust.recipients(recipients);
        const users = (): UserId[] => kept.map((u) => new UserId(u));
        const claim = await this.machine.getMissingSessions(users());
        if (claim) await sendMachineRequest(this.machine, claim, this.options.call);
        const shares = await this.machine.shareRoomKey(
          new RoomId(roomId),
          users(),
          encryptionSettings(settings, trust),
        );
        for (const share of shares) await sendMachineRequest(this.machine, share, this.options.call);
        const encrypted = await this.machine.encryptRoomEvent(
          new RoomId(roomId),
          type,
          JSON.stringify(content),
        );
        await this.flush();
        await this.persist();
        return z.record(z.string(), z.unknown()).parse(JSON.parse(encrypted));
      } catch (err) {
        throw wasmError(err);
      }
    });
  }

  /** Closes the machine; nothing may be called after. */
  async close(): Promise<void> {
    await this.exclusive(async () => {
      if (this.closed) return;
      this.closed = true;
      this.machine.close();
      await this.database.drop();
    });
  }

  /** Sends every request the machine has queued; true when any was sent. */
  private async flush(): Promise<boolean> {
    let sent = false;
    // A response can queue further requests (a key query after an upload): go until none is left.
    for (let round = 0; round < 5; round++) {
      const requests = await this.machine.outgoingRequests();
      let progressed = false;
      for (const request of requests) {
        if (request instanceof RoomMessageRequest) {
          if (this.roomRequestsInFlight.has(request.id) || this.roomRequestListeners.length === 0) continue;
          this.roomRequestsInFlight.add(request.id);
          for (const listener of this.roomRequestListeners) listener(request);
        } else if (await sendMachineRequest(this.machine, request, this.options.call)) progressed = true;
        else this.options.log.debug({ type: request.type }, "matrix: crypto request kind not used; left");
      }
      sent ||= progressed;
      if (!progressed) break;
    }
    return sent;
  }

  private persist(): Promise<void> {
    return this.database.save(this.identityKeys);
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      if (this.closed) throw new Error("matrix: the crypto device is closed");
      return task();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }
}
