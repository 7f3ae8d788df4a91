import { RoomId, UserId, type OlmMachine } from "@matrix-org/matrix-sdk-crypto-wasm";
import type { Logger } from "../../core/log.js";
import type { CryptoDevice, ToDeviceMessage } from "./crypto-device.js";
import { sendMachineRequest, type HomeserverCall } from "./outgoing-requests.js";
import { identityChange, type TrustMode } from "./trust-policy.js";

/** The to-device types of an MSC4268 room-key bundle's details (unstable and stable names). */
export const ROOM_KEY_BUNDLE_TYPES: ReadonlySet<string> = new Set([
  "io.element.msc4268.room_key_bundle",
  "m.room_key_bundle",
]);

/** How long after joining on an invite a bundle from the inviter is still taken (matrix-js-sdk's day). */
export const BUNDLE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** What taking room-key bundles needs. */
export interface RoomKeyBundlesOptions {
  device: CryptoDevice;
  call: HomeserverCall;
  /** Downloads an mxc:// URI (the encrypted bundle) with the bot's token, capped. */
  download: (mxc: string) => Promise<Uint8Array>;
  trust: TrustMode;
  log: Logger;
  /** Now, for the bundle window (tests move it). */
  now?: () => number;
}

/**
 * Room-key bundles (MSC4268): a person whose client shares history with the people it
 * invites (Element's "history sharing") uploads the room keys it holds, encrypted, and
 * sends their details to the invitee's devices. The bot takes such a bundle only from the
 * person who invited it into the room it joined, within a day of joining, only when the
 * device that sent it is cross-signed by that person (the crypto machine checks this)
 * and, unless `trust: all`, only while their identity is the one the bot pinned. The
 * keys let the bot read the room's encrypted messages from before it joined.
 */
export class RoomKeyBundles {
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(private readonly options: RoomKeyBundlesOptions) {
    options.device.onToDevice((messages) => this.fromToDevice(messages));
  }

  /**
   * The bot joined `roomId` on `inviter`'s invite: waits for their bundle from now on
   * (recorded in the device's store, so a new owner keeps waiting) and takes it at once
   * when it is already here (clients send it before the invite).
   */
  async joined(roomId: string, inviter: string): Promise<boolean> {
    await this.options.device.run((machine) =>
      machine.storeRoomPendingKeyBundle(new RoomId(roomId), new UserId(inviter)),
    );
    return this.accept(roomId, inviter);
  }

  /** Looks again for the bundles of rooms still waiting (the device was just opened); forgets stale waits. */
  async resume(): Promise<void> {
    const pending = await this.options.device.run(async (machine) =>
      (await machine.getAllRoomsPendingKeyBundles()).map((p) => {
        const details = {
          roomId: p.roomId.toString(),
          inviter: p.inviterId.toString(),
          at: p.inviteAcceptedAtMillis,
        };
        p.free();
        return details;
      }),
    );
    for (const p of pending) {
      if (this.now() - p.at > BUNDLE_WINDOW_MS) await this.forget(p.roomId);
      else await this.accept(p.roomId, p.inviter).catch((err: unknown) => this.failed(p.roomId, err));
    }
  }

  /** Takes the bundle of a room the bot is waiting for, when its details arrive after the join. */
  private fromToDevice(messages: ToDeviceMessage[]): void {
    for (const message of messages) {
      const roomId = message.content.room_id;
      if (!ROOM_KEY_BUNDLE_TYPES.has(message.type) || typeof roomId !== "string") continue;
      // Off the sync in hand: the device is busy with it until this listener returns.
      setImmediate(() => void this.arrived(roomId).catch((err: unknown) => this.failed(roomId, err)));
    }
  }

  private async arrived(roomId: string): Promise<void> {
    const pending = await this.options.device.run(async (machine) => {
      const p = await machine.getPendingKeyBundleDetailsForRoom(new RoomId(roomId));
      if (!p) return undefined;
      const details = { inviter: p.inviterId.toString(), at: p.inviteAcceptedAtMillis };
      p.free();
      return details;
    });
    if (!pending) {
      this.options.log.debug(
        { roomId },
        "matrix: a room-key bundle for a room the bot did not just join; left",
      );
      return;
    }
    if (this.now() - pending.at > BUNDLE_WINDOW_MS) return this.forget(roomId);
    await this.accept(roomId, pending.inviter);
  }

  /** One attempt per room at a time. */
  private accept(roomId: string, inviter: string): Promise<boolean> {
    const running = this.inFlight.get(roomId);
    if (running) return running;
    const attempt = this.take(roomId, inviter).finally(() => this.inFlight.delete(roomId));
    this.inFlight.set(roomId, attempt);
    return attempt;
  }

  /**
   * Downloads and imports the inviter's bundle for the room, when one came; true when
   * imported. The inviter's keys are fetched first, so that the machine checks the
   * sending device against their current cross-signing identity.
   */
  private async take(roomId: string, inviter: string): Promise<boolean> {
    const { device, call, log, trust } = this.options;
    const found = await device.run(async (machine) => {
      await sendMachineRequest(machine, machine.queryKeysForUsers([new UserId(inviter)]), call);
      const changed = trust === "all" ? undefined : await identityChange(machine, inviter);
      if (changed) return { refused: changed } as const;
      const data = await machine.getReceivedRoomKeyBundleData(new RoomId(roomId), new UserId(inviter));
      return data ? ({ data } as const) : undefined;
    });
    if (!found) {
      log.debug({ roomId, inviter }, "matrix: no room-key bundle from the inviter yet");
      return false;
    }
    if ("refused" in found) {
      log.warn(
        { roomId, inviter, masterKey: found.refused },
        "matrix: the inviter's identity changed since it was pinned; their room-key bundle is not taken",
      );
      await this.forget(roomId);
      return false;
    }
    const { data } = found;
    let consumed = false;
    try {
      // A failed download leaves the room waiting: the next start or bundle message tries again.
      const encrypted = await this.options.download(data.url);
      const imported = await device.run(async (machine: OlmMachine) => {
        const before = await keyCount(machine);
        try {
          // The machine takes the bundle's details over (they are freed with the call).
          consumed = true;
          await machine.receiveRoomKeyBundle(data, encrypted);
        } finally {
          // Taken, or malformed: either way not tried again (as matrix-js-sdk does).
          await machine.clearRoomPendingKeyBundle(new RoomId(roomId));
        }
        return (await keyCount(machine)) - before;
      });
      if (imported > 0)
        log.info({ roomId, inviter, keys: imported }, "matrix: took the inviter's room-key bundle");
      else
        log.info(
          { roomId, inviter },
          "matrix: the inviter's room-key bundle brought no new keys (none the bot lacked, or its sending device is not cross-signed by them)",
        );
      return imported > 0;
    } finally {
      if (!consumed) data.free();
    }
  }

  private forget(roomId: string): Promise<void> {
    return this.options.device.run((machine) => machine.clearRoomPendingKeyBundle(new RoomId(roomId)));
  }

  private failed(roomId: string, err: unknown): void {
    this.options.log.warn({ err, roomId }, "matrix: a room-key bundle could not be taken");
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/** How many room keys the machine holds. */
async function keyCount(machine: OlmMachine): Promise<number> {
  const counts = await machine.roomKeyCounts();
  const total = counts.total;
  counts.free();
  return total;
}
