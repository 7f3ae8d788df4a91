import type { MatrixClient } from "matrix-bot-sdk";
import type { InboundEvent, InboundFile } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { matrixRoom } from "../core/room.js";
import type { Classified } from "./classify-event.js";
import { RelatesToSchema, RoomEventSchema, type MatrixOrigin, type RoomEvent } from "./matrix-events.js";
import { statusOf, withMatrixRetry } from "./matrix-retry.js";
import type { RoomBinding } from "./room-policy.js";

type Readable = Extract<Classified, { type: "message" | "reaction" | "file" }>;

/**
 * Turns a classified room event into the InboundEvent the engine sees, doing the I/O
 * that needs: a reaction's target is fetched (only keycaps on the bot's own messages
 * count, and the answer goes where the offer went), a text file is downloaded.
 */
export class InboundBuilder {
  private readonly utf8 = new TextDecoder("utf-8", { fatal: true });

  constructor(
    private readonly client: MatrixClient,
    private readonly botUserId: string,
    private readonly maxFileBytes: number,
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
    const base = {
      eventId: `mx:${event.event_id}`,
      room: matrixRoom(roomId),
      namespace: binding.namespace,
      platform: "matrix" as const,
      sender: { id: event.sender, allowed },
      receivedAt: Date.now(),
    };
    const origin = (extra: Partial<MatrixOrigin>): MatrixOrigin => ({
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
        return { ...base, kind: "message", text: classified.text, origin: origin(placed(classified)) };
      case "file": {
        const file = await this.file(classified);
        return { ...base, kind: "file", file, origin: origin(placed(classified)) };
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
    let data: Buffer;
    try {
      data = await this.download(c.url);
    } catch (err) {
      this.log.warn({ err, url: c.url }, "matrix file download failed");
      return { ...file, rejected: `${c.name} could not be downloaded from the homeserver.` };
    }
    if (data.length > this.maxFileBytes) {
      return { ...file, size: data.length, rejected: `${c.name} is larger than ${this.maxFileBytes} bytes.` };
    }
    try {
      return { ...file, size: data.length, text: this.utf8.decode(data) };
    } catch {
      return { ...file, size: data.length, rejected: `${c.name} is not UTF-8 text.` };
    }
  }

  /**
   * Downloads media through the authenticated media API (Matrix 1.11), falling back
   * to the legacy media download for servers that do not have it yet.
   */
  private async download(mxc: string): Promise<Buffer> {
    const [server = "", mediaId = ""] = mxc.replace(/^mxc:\/\//, "").split("/");
    const path = `/_matrix/client/v1/media/download/${encodeURIComponent(server)}/${encodeURIComponent(mediaId)}`;
    try {
      const response = (await withMatrixRetry(
        "media download",
        () => this.client.doRequest("GET", path, null, null, 60_000, true, undefined, true),
        this.log,
      )) as { body: Buffer };
      return response.body;
    } catch (err) {
      const status = statusOf((err as { cause?: unknown }).cause);
      if (status !== 404 && status !== 400 && status !== 405) throw err;
      return (await this.client.downloadContent(mxc)).data;
    }
  }
}
