import {
  DecryptionSettings,
  DeviceId,
  OlmMachine,
  RoomId,
  RoomMessageRequest,
  ShieldStateCode,
  TrustRequirement,
  UserId,
  type DecryptedRoomEvent,
  type RequestType,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { Logger } from "../../core/log.js";
import {
  LostCryptoStoreError,
  MismatchedCryptoStoreError,
  UndecryptableEventError,
} from "./crypto-errors.js";
import type { CryptoStore } from "./crypto-store.js";
import { deleteDatabases, restoreDatabases, snapshotDatabases } from "./idb-snapshot.js";
import { deviceHasKeys, sendMachineRequest, type HomeserverCall } from "./outgoing-requests.js";
import { encryptionSettings, type RoomCryptoSettings } from "./room-settings.js";
import { identityChange, pinIdentity, senderRequirement, type TrustMode } from "./trust-policy.js";
import { decryptionFailure, loadCrypto, syncCryptoParts, wasmError } from "./wasm-crypto.js";

const ClearEventSchema = z.looseObject({
  type: z.string(),
  content: z.record(z.string(), z.unknown()).default({}),
});

/** How long closing waits for the machine's in-memory database to be let go of. */
const CLOSE_WAIT_MS = 2000;

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

/** A decrypted room event: the clear type and content, and who the machine says sent it. */
export interface DecryptedEvent {
  type: string;
  content: Record<string, unknown>;
  senderDevice: string | undefined;
}

/** What opening the device needs. */
export interface CryptoDeviceOptions {
  userId: string;
  deviceId: string;
  store: CryptoStore;
  /** The lease token every store write is fenced with. */
  leaseToken: () => string;
  call: HomeserverCall;
  log: Logger;
  /** Whose devices get the bot's room keys and whose messages are read (default `cross-signed`). */
  trust?: TrustMode;
  /** New identities the operator approved (`roomgate matrix trust`), applied when the person is next seen. */
  approvals?: PinApprovals;
}

/** The operator's approvals of changed identities: the master key approved per user. */
export interface PinApprovals {
  approved(userId: string): Promise<string | undefined>;
  applied(userId: string, masterKey: string): Promise<void>;
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
  private generation = 0;
  private readonly keyListeners: ((keys: ArrivedRoomKey[]) => void)[] = [];
  private readonly toDeviceListeners: ((messages: ToDeviceMessage[]) => void)[] = [];
  private readonly roomRequestListeners: ((request: RoomMessageRequest) => void)[] = [];
  /** Room messages the machine asked for that a listener is sending (they stay queued until marked sent). */
  private readonly roomRequestsInFlight = new Set<string>();
  private closed = false;

  private constructor(
    private readonly machine: OlmMachine,
    private readonly options: CryptoDeviceOptions,
    /** The IndexedDB name this machine stores under, unique to the opening. */
    private readonly storeName: string,
  ) {
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
    const { userId, deviceId, store, log } = options;
    const loaded = await store.load();
    if (loaded) {
      if (loaded.meta.userId !== userId || loaded.meta.deviceId !== deviceId) {
        throw new MismatchedCryptoStoreError(
          `matrix: the crypto store is for ${loaded.meta.deviceId} of ${loaded.meta.userId}, not ${deviceId} of ${userId}`,
        );
      }
    } else if (await deviceHasKeys(options.call, userId, deviceId)) {
      throw new LostCryptoStoreError(userId, deviceId);
    }
    // A name of its own: a process that lost the device and took it again, or a test
    // holding two devices, never shares a database with an earlier machine.
    const storeName = `roomgate-crypto-${randomUUID()}`;
    if (loaded) await restoreDatabases(loaded.snapshot, storeName);
    const machine = await OlmMachine.initialize(new UserId(userId), new DeviceId(deviceId), storeName).catch(
      (err: unknown) => Promise.reject(wasmError(err)),
    );
    const device = new CryptoDevice(machine, options, storeName);
    try {
      if (loaded) {
        device.generation = loaded.meta.generation;
        const keys = device.identityKeys;
        if (keys.curve25519 !== loaded.meta.curve25519 || keys.ed25519 !== loaded.meta.ed25519) {
          throw new MismatchedCryptoStoreError(
            `matrix: the crypto store of ${deviceId} opened with other identity keys than it recorded`,
          );
        }
        log.info(
          { deviceId, ed25519: keys.ed25519, generation: loaded.meta.generation },
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
  get identityKeys(): { curve25519: string; ed25519: string } {
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
   * Decrypts a room event, requiring of its sender's device what `trust` says; throws
   * UndecryptableEventError saying why not (its key is missing, the device is not
   * trusted, the sender's pinned identity changed, or anything else). A sender's
   * device the bot has not learnt yet is asked for once before a refusal.
   */
  async decrypt(
    roomId: string,
    event: { event_id: string; sender: string; origin_server_ts?: number; content: Record<string, unknown> },
  ): Promise<DecryptedEvent> {
    return this.exclusive(async () => {
      const trust = this.options.trust ?? "cross-signed";
      const attempt = () =>
        this.machine.decryptRoomEvent(
          JSON.stringify(event),
          new RoomId(roomId),
          new DecryptionSettings(senderRequirement(trust)),
        );
      const sessionId = typeof event.content.session_id === "string" ? event.content.session_id : undefined;
      const refuse = (code: UndecryptableEventError["code"], cause: unknown, identity?: string) =>
        new UndecryptableEventError(event.event_id, code, sessionId, {
          cause: wasmError(cause),
          ...(identity ? { identity } : {}),
        });
      let decrypted;
      try {
        decrypted = await attempt().catch(async (err: unknown) => {
          if (decryptionFailure(err) !== "untrusted-device") throw err;
          await this.learn(event.sender);
          return attempt();
        });
      } catch (err) {
        decrypted = await this.recovered(roomId, event, err);
        // A device signed by a changed identity reads as not cross-signed until that identity is
        // pinned: refused as what it is, and read once the operator's approval is pinned.
        const changedIdentity =
          !decrypted && trust !== "all" && decryptionFailure(err) === "untrusted-device"
            ? await identityChange(this.machine, event.sender)
            : undefined;
        if (changedIdentity) {
          const unapproved = await this.unapprovedChange(event.sender);
          if (unapproved) throw refuse("identity-changed", err, unapproved);
          decrypted = await attempt().catch((again: unknown) => {
            throw refuse(decryptionFailure(again), again);
          });
        }
        if (!decrypted) throw refuse(decryptionFailure(err), err);
      }
      const changed = trust === "all" ? undefined : await this.unapprovedChange(event.sender);
      if (changed) throw refuse("identity-changed", new Error(`${event.sender} has a new identity`), changed);
      const clear = ClearEventSchema.parse(JSON.parse(decrypted.event));
      return { type: clear.type, content: clear.content, senderDevice: decrypted.senderDevice?.toString() };
    });
  }

  /**
   * An event the trust mode refused only because its room key came from the key backup
   * (its authenticity cannot be checked, as Element's grey shield says), sent before this
   * device existed: history a new device recovers after a lost store, read once. Anything
   * sent since must come with a room key its sender's device shared with this device.
   */
  private async recovered(
    roomId: string,
    event: { event_id: string; origin_server_ts?: number },
    err: unknown,
  ): Promise<DecryptedRoomEvent | undefined> {
    if (decryptionFailure(err) !== "untrusted-device") return undefined;
    const sent = event.origin_server_ts ?? Number.POSITIVE_INFINITY;
    if (sent >= this.machine.deviceCreationTimeMs) return undefined;
    const decrypted = await this.machine
      .decryptRoomEvent(
        JSON.stringify(event),
        new RoomId(roomId),
        new DecryptionSettings(TrustRequirement.Untrusted),
      )
      .catch(() => undefined);
    const shield = decrypted?.shieldState(false);
    if (shield?.code !== ShieldStateCode.AuthenticityNotGuaranteed) return undefined;
    this.options.log.info(
      { roomId, eventId: event.event_id },
      "matrix: read an event from before this device with a room key from the key backup",
    );
    return decrypted;
  }

  /**
   * A person's new master key when their identity changed and the operator has not
   * approved it; an approved one is pinned here (and saved) and no longer refused.
   */
  private async unapprovedChange(userId: string): Promise<string | undefined> {
    const changed = await identityChange(this.machine, userId);
    if (!changed) return undefined;
    const approved = await this.options.approvals?.approved(userId);
    if (approved !== changed || !(await pinIdentity(this.machine, userId, changed))) return changed;
    await this.persist();
    await this.options.approvals?.applied(userId, changed);
    this.options.log.warn(
      { userId, masterKey: changed },
      "matrix: pinned a person's new identity, as the operator approved",
    );
    return undefined;
  }

  /** Fetches a user's devices and identity now (a sender the machine has not learnt yet). */
  private async learn(userId: string): Promise<void> {
    await this.machine.updateTrackedUsers([new UserId(userId)]);
    await sendMachineRequest(
      this.machine,
      this.machine.queryKeysForUsers([new UserId(userId)]),
      this.options.call,
    );
    await this.persist();
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
        const kept: string[] = [];
        for (const user of recipients) {
          if (trust === "all" || !(await this.unapprovedChange(user))) kept.push(user);
        }
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
      // The in-memory database is dropped once the machine lets go of it. A listener the
      // machine still runs (a cancelled verification's) can hold it open: then it is left,
      // a little memory, rather than the device's stop waiting for ever.
      const dropped = await Promise.race([
        deleteDatabases(this.storeName).then(() => true),
        sleep(CLOSE_WAIT_MS).then(() => false),
      ]);
      if (!dropped)
        this.options.log.debug({ store: this.storeName }, "matrix: the closed machine's database was left");
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

  private async persist(): Promise<void> {
    const started = performance.now();
    const snapshot = await snapshotDatabases(this.storeName);
    this.generation += 1;
    const bytes = await this.options.store.save(
      this.options.leaseToken(),
      {
        userId: this.options.userId,
        deviceId: this.options.deviceId,
        ...this.identityKeys,
        generation: this.generation,
        savedAt: Date.now(),
      },
      snapshot,
    );
    this.options.log.debug(
      { bytes, ms: Math.round(performance.now() - started), generation: this.generation },
      "matrix: crypto store saved",
    );
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
