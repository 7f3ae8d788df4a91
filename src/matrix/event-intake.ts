import type { Inbox } from "../core/adapter.js";
import type { Logger } from "../core/log.js";
import { matrixRoom } from "../core/room.js";
import type { FloodGate } from "../edge/flood-gate.js";
import type { EdgeNotices } from "./edge-notices.js";
import type { InboundBuilder } from "./inbound-builder.js";
import type { RoomEvent } from "./matrix-events.js";
import type { AdmittedEvent } from "./message-admission.js";
import type { RoomBinding } from "./room-policy.js";

/**
 * The last steps of an admitted event: the flood limits, the InboundEvent built (a
 * reaction's target fetched, a file downloaded) and queued. Files are read off the
 * sync loop, one chain per room so that a room's files keep their order.
 */
export class EventIntake {
  private readonly reads = new Map<string, Promise<void>>();

  constructor(
    private readonly builder: InboundBuilder,
    private readonly notices: EdgeNotices,
    private readonly inbox: Inbox,
    private readonly flood: FloodGate | undefined,
    private readonly log: Logger,
  ) {}

  /** Takes an admitted event of an allowed person. */
  async take(binding: RoomBinding, event: RoomEvent, admitted: AdmittedEvent): Promise<void> {
    const roomId = binding.roomId;
    const log = this.log.child({ roomId, eventId: event.event_id });
    const flood = this.flood;
    const thread = admitted.type === "reaction" ? undefined : admitted.threadRoot;
    const refused = async (notice: string | undefined): Promise<void> => {
      if (notice) await this.notices.say(roomId, event.event_id, event.sender, notice, thread);
    };
    // A file is downloaded and a reaction's target fetched only once admitted, so their
    // flood check comes first, on its own; a message is checked in its enqueue's round trip.
    const checkedInEnqueue = flood !== undefined && admitted.type === "message";
    if (flood && !checkedInEnqueue) {
      const verdict = await flood.check(matrixRoom(roomId, thread), event.sender);
      if (!verdict.admit) return refused(verdict.notice);
    }
    const enqueue = async (): Promise<void> => {
      const inbound = await this.builder.build(binding, event, admitted, true);
      if (!inbound) return;
      if (!flood || !checkedInEnqueue) {
        const fresh = await this.inbox.enqueue(inbound);
        log.debug({ kind: inbound.kind, fresh }, "matrix event enqueued");
        return;
      }
      const queued = await flood.enqueue(this.inbox, inbound, event.sender);
      if (!queued.admit) return refused(queued.notice);
      log.debug({ kind: inbound.kind, fresh: queued.fresh }, "matrix event enqueued");
    };
    if (admitted.type === "file") this.readLater(roomId, enqueue);
    else await enqueue();
  }

  /** Waits for the file reads in flight. */
  async drain(): Promise<void> {
    await Promise.all(this.reads.values());
  }

  private readLater(roomId: string, task: () => Promise<void>): void {
    const next = (this.reads.get(roomId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => this.log.error({ err, roomId }, "a Matrix file could not be queued"))
      .finally(() => {
        if (this.reads.get(roomId) === next) this.reads.delete(roomId);
      });
    this.reads.set(roomId, next);
  }
}
