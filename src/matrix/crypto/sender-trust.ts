import type { OlmMachine } from "@matrix-org/matrix-sdk-crypto-wasm";
import {
  DecryptionSettings,
  RoomId,
  ShieldStateCode,
  TrustRequirement,
  UserId,
  type DecryptedRoomEvent,
} from "@matrix-org/matrix-sdk-crypto-wasm";
import { z } from "zod";
import type { Logger } from "../../core/log.js";
import { UndecryptableEventError } from "./crypto-errors.js";
import { sendMachineRequest, type HomeserverCall } from "./outgoing-requests.js";
import { identityChange, pinIdentity, senderRequirement, type TrustMode } from "./trust-policy.js";
import { decryptionFailure, wasmError } from "./wasm-crypto.js";

const ClearEventSchema = z.looseObject({
  type: z.string(),
  content: z.record(z.string(), z.unknown()).default({}),
});

/** A decrypted room event: the clear type and content, and who the machine says sent it. */
export interface DecryptedEvent {
  type: string;
  content: Record<string, unknown>;
  senderDevice: string | undefined;
}

/** The operator's approvals of changed identities: the master key approved per user. */
export interface PinApprovals {
  approved(userId: string): Promise<string | undefined>;
  applied(userId: string, masterKey: string): Promise<void>;
}

/** An encrypted room event as it reaches the device. */
export interface EncryptedRoomEvent {
  event_id: string;
  sender: string;
  origin_server_ts?: number;
  content: Record<string, unknown>;
}

/** What the trust decisions need from the device. */
export interface SenderTrustOptions {
  machine: OlmMachine;
  trust: TrustMode;
  approvals: PinApprovals | undefined;
  call: HomeserverCall;
  log: Logger;
  /** Writes the device's store (after a person's identity was learnt or pinned). */
  persist: () => Promise<void>;
}

/**
 * The device's trust decisions (`matrix.trust`, crypto/trust-policy.ts): whose messages
 * it reads, who gets its room keys, and a person whose pinned identity changed, refused
 * until the operator's approval is pinned. Called by the device while it holds its lock.
 */
export class SenderTrust {
  constructor(private readonly options: SenderTrustOptions) {}

  /**
   * Decrypts a room event, requiring of its sender's device what `trust` says; throws
   * UndecryptableEventError saying why not (its key is missing, the device is not
   * trusted, the sender's pinned identity changed, or anything else). A sender's
   * device the bot has not learnt yet is asked for once before a refusal.
   */
  async decrypt(roomId: string, event: EncryptedRoomEvent): Promise<DecryptedEvent> {
    const { machine, trust } = this.options;
    const attempt = () =>
      machine.decryptRoomEvent(
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
          ? await identityChange(machine, event.sender)
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
  }

  /** The recipients who may get the bot's room keys: not a person whose pinned identity changed unapproved. */
  async recipients(users: readonly string[]): Promise<string[]> {
    const kept: string[] = [];
    for (const user of users) {
      if (this.options.trust === "all" || !(await this.unapprovedChange(user))) kept.push(user);
    }
    return kept;
  }

  /**
   * An event the trust mode refused only because its room key came from the key backup
   * (its authenticity cannot be checked, as Element's grey shield says), sent before this
   * device existed: history a new device recovers after a lost store, read once. Anything
   * sent since must come with a room key its sender's device shared with this device.
   */
  private async recovered(
    roomId: string,
    event: EncryptedRoomEvent,
    err: unknown,
  ): Promise<DecryptedRoomEvent | undefined> {
    const { machine, log } = this.options;
    if (decryptionFailure(err) !== "untrusted-device") return undefined;
    const sent = event.origin_server_ts ?? Number.POSITIVE_INFINITY;
    if (sent >= machine.deviceCreationTimeMs) return undefined;
    const decrypted = await machine
      .decryptRoomEvent(
        JSON.stringify(event),
        new RoomId(roomId),
        new DecryptionSettings(TrustRequirement.Untrusted),
      )
      .catch(() => undefined);
    const shield = decrypted?.shieldState(false);
    if (shield?.code !== ShieldStateCode.AuthenticityNotGuaranteed) return undefined;
    log.info(
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
    const { machine, approvals, log } = this.options;
    const changed = await identityChange(machine, userId);
    if (!changed) return undefined;
    const approved = await approvals?.approved(userId);
    if (approved !== changed || !(await pinIdentity(machine, userId, changed))) return changed;
    await this.options.persist();
    await approvals?.applied(userId, changed);
    log.warn(
      { userId, masterKey: changed },
      "matrix: pinned a person's new identity, as the operator approved",
    );
    return undefined;
  }

  /** Fetches a user's devices and identity now (a sender the machine has not learnt yet). */
  private async learn(userId: string): Promise<void> {
    const { machine, call } = this.options;
    await machine.updateTrackedUsers([new UserId(userId)]);
    await sendMachineRequest(machine, machine.queryKeysForUsers([new UserId(userId)]), call);
    await this.options.persist();
  }
}
