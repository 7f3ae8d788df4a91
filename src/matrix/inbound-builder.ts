import type { MatrixClient } from "matrix-bot-sdk";
import type { Addressed, InboundEvent, InboundFile } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { matrixRoom } from "../core/room.js";
import type { Classified } from "./classify-event.js";
import type { MatrixOrigin } from "../core/origin.js";
import { RelatesToSchema, RoomEventSchema, type RoomEvent } from "./matrix-events.js";
import type { MediaReader } from "./media-reader.js";
import { withMatrixRetry } from "./matrix-retry.js";
import type { RoomBinding } from "./room-policy.js";

type Readable = Extract<Classified, { type: "message" | "reaction" | "file" }> & { addressed: Addressed };

/**
 * Turns a classified room event into the InboundEvent the engine sees, doing the I/O
 * that needs: a reaction's target is fetched (only keycaps on the bot's own messages
 * count, and the answer goes where the offer went), a text file is downloaded (capped).
 */
export class InboundBuilder {
  constructor(
    private readonly client: MatrixClient,
    private readonly botUserId: string,
    private readonly media: MediaReader,
    private readonly log: Logger,
  ) {}

  /** The InboundEvent for the room event, or null when it is not for the engine after all. */
  async build(
    binding: RoomBinding,
    event: RoomEvent,
    classified: Readable,
    allowed: boolean,
  ): Promise<InboundEvent | null> {
    const roomId = binding.roomId;
    // A thread is a room of its own (its own session); the main timeline is the room's.
    const inRoom = (threadRoot?: string) => ({ room: matrixRoom(roomId, threadRoot) });
    const base = {
      eventId: `mx:${event.event_id}`,
      namespace: binding.namespace,
      platform: "matrix" as const,
      sender: { id: event.sender, allowed },
      addressed: classified.addressed,
      receivedAt: Date.now(),
      ...(classified.type !== "reaction" && classified.replyTo ? { replyTo: classified.replyTo } : {}),
    };
    const origin = (extra: Partial<MatrixOrigin>): MatrixOrigin => ({
      platform: "matrix",
      roomId,
      eventId: event.event_id,
      answerTo: event.event_id,
      ...extra,
    });
    const placed = (c: { threadRoot?: string; replyTo?: string }): Partial<MatrixOrigin> => ({
      ...(c.threadRoot ? { threadRoot: c.threadRoot } : {}),
      ...(c.replyTo ? { replyTo: c.replyTo } : {}),
    });
    switch (classified.type) {
      case "message":
        return {
          ...base,
          ...inRoom(classified.threadRoot),
          kind: "message",
          text: classified.text,
          origin: origin(placed(classified)),
        };
      case "file": {
        const file = await this.file(classified);
        return {
          ...base,
          ...inRoom(classified.threadRoot),
          kind: "file",
          file,
          origin: origin(placed(classified)),
        };
      }
      case "reaction": {
        const offer = await this.botMessage(roomId, classified.target);
        if (!offer) return null;
        const relates = RelatesToSchema.safeParse(offer.content["m.relates_to"]);
        const rel = relates.success ? relates.data : undefined;
        const threadRoot = rel?.rel_type === "m.thread" ? rel.event_id : undefined;
        const question = rel?.["m.in_reply_to"]?.event_id ?? offer.event_id;
        return {
          ...base,
          ...inRoom(threadRoot),
          kind: "reaction",
          messageRef: offer.event_id,
          number: classified.number,
          origin: origin({
            answerTo: question,
            replyTo: offer.event_id,
            ...(threadRoot ? { threadRoot } : {}),
          }),
        };
      }
    }
  }

  /** The event a reaction points at, when the bot sent it; anything else is not an offer. */
  private async botMessage(roomId: string, eventId: string): Promise<RoomEvent | null> {
    try {
      const raw: unknown = await withMatrixRetry(
        "event fetch",
        () => this.client.getEvent(roomId, eventId),
        this.log,
      );
      const event = RoomEventSchema.safeParse(raw);
      return event.success && event.data.sender === this.botUserId ? event.data : null;
    } catch (err) {
      this.log.warn(
        { err, roomId, eventId },
        "cannot fetch the event a reaction points at; ignoring the reaction",
      );
      return null;
    }
  }

  private async file(c: Extract<Classified, { type: "file" }>): Promise<InboundFile> {
    const file: InboundFile = { name: c.name, mime: c.mime, size: c.size };
    if (c.rejected !== undefined || c.url === undefined)
      return { ...file, rejected: c.rejected ?? "unreadable" };
    return this.media.read({
      name: c.name,
      mime: c.mime,
      claimedSize: c.size,
      url: c.url,
      ...(c.encryption ? { encryption: c.encryption } : {}),
    });
  }
}
