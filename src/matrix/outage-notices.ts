import { RoomgateError } from "../core/errors.js";
import type { Logger } from "../core/log.js";
import { UNQUEUED_NOTICE } from "../core/unqueued.js";
import { OutageNotices, type OutageNoticeOptions } from "../edge/outage-notices.js";
import { isUnacknowledged } from "../scheduler/durable-write.js";
import type { EdgeNotices } from "./edge-notices.js";
import type { EncryptionPolicy } from "./encryption-policy.js";

/** The event whose room may be told: the one the sync holds because Redis did not take it. */
export interface HeldEvent {
  roomId: string;
  eventId: string;
  sender: string;
  threadRoot?: string;
}

/**
 * An encrypted room is not told during an outage: encrypting saves the device's store in
 * Redis before the ciphertext leaves (a room key's ratchet must never be used twice after
 * a crash), which is the write Redis refuses, and nothing goes into such a room in the clear.
 */
export class EncryptedRoomNotToldError extends RoomgateError {
  constructor(readonly roomId: string) {
    super(`matrix: room ${roomId} is encrypted and its outage notice cannot be encrypted without Redis`);
  }
}

/**
 * The Matrix side of telling a room its message waits for Redis (the policy is
 * edge/outage-notices.ts): an `m.notice` in reply to the held event, in its thread,
 * sent once without Redis under a transaction id of the room and event, so that the
 * same notice sent again (by this process or the next owner of the sync) is posted once.
 */
export class MatrixOutageNotices {
  private readonly policy: OutageNotices;

  constructor(
    private readonly notices: EdgeNotices,
    private readonly encryption: Pick<EncryptionPolicy, "isEncrypted">,
    log: Logger,
    options?: OutageNoticeOptions,
  ) {
    this.policy = new OutageNotices("matrix", log, options);
  }

  /** Queueing `held` failed with `err`: when Redis did not take it for long enough, its room is told. */
  failed(held: HeldEvent, err: unknown): void {
    if (!isUnacknowledged(err)) return;
    this.policy.failed(held.roomId, this.policy.refusedSince(held.eventId), async () => {
      if (this.encryption.isEncrypted(held.roomId)) throw new EncryptedRoomNotToldError(held.roomId);
      await this.notices.sayAs(`unqueued\n${held.eventId}`, { ...held, text: UNQUEUED_NOTICE });
    });
  }

  /** Waits before a message of `roomId` is queued: a room being told, or just told, gets its answer after the notice. */
  heldBack(roomId: string): Promise<void> {
    return this.policy.heldBack(roomId);
  }

  /** An event was queued: the outage (if any) is over. */
  queued(eventId: string): void {
    this.policy.queued(eventId);
  }
}
