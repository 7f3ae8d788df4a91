import type { MatrixClient } from "matrix-bot-sdk";
import type { EditsConfig } from "../core/config.js";
import type { Logger } from "../core/log.js";
import { editsTotal } from "../ops/metrics.js";
import { placementOf, stripReplyFallback, type Classified } from "./classify-event.js";
import { MessageContentSchema, RoomEventSchema, type RoomEvent } from "./matrix-events.js";
import { withMatrixRetry } from "./matrix-retry.js";
import type { GatedMessage } from "./mention-gate.js";

type Edit = Extract<Classified, { type: "edit" }>;

/**
 * Decides what an edit (m.replace) of a message means: with `edits.reask` on, an
 * edit by the message's own author within the window is asked again as a message;
 * otherwise it is ignored with a note in the log.
 */
export class EditReview {
  constructor(
    private readonly client: MatrixClient,
    private readonly edits: EditsConfig,
    private readonly log: Logger,
  ) {}

  /** The edited message to ask again, or null when the edit is only logged. */
  async review(roomId: string, event: RoomEvent, edit: Edit): Promise<GatedMessage | null> {
    const log = this.log.child({ roomId, eventId: event.event_id, edits: edit.target });
    if (!this.edits.reask) return this.ignore(log, "edits.reask is off");
    let original: RoomEvent | undefined;
    try {
      const raw: unknown = await withMatrixRetry(
        "event fetch",
        () => this.client.getEvent(roomId, edit.target),
        log,
      );
      original = RoomEventSchema.safeParse(raw).data;
    } catch (err) {
      log.debug({ err }, "matrix: cannot fetch the edited message");
    }
    if (!original) return this.ignore(log, "the edited message cannot be read");
    // Only the author may edit a message (the spec); anything else is not an edit of it.
    if (original.sender !== event.sender) return this.ignore(log, "edited by someone else");
    const age = event.origin_server_ts - original.origin_server_ts;
    if (age > this.edits.windowSeconds * 1000) return this.ignore(log, "outside edits.windowSeconds");
    const content = MessageContentSchema.safeParse(original.content);
    const fresh = event.content["m.new_content"];
    editsTotal.inc({ platform: "matrix", action: "reasked" });
    log.info({ ageMs: age }, "matrix: edited message asked again");
    const placement = content.success ? placementOf(content.data) : {};
    const text = placement.replyTo ? stripReplyFallback(edit.text) : edit.text;
    return {
      text,
      ...placement,
      content: typeof fresh === "object" && fresh !== null ? (fresh as Record<string, unknown>) : {},
    };
  }

  private ignore(log: Logger, reason: string): null {
    editsTotal.inc({ platform: "matrix", action: "ignored" });
    log.info({ reason }, "matrix: edited message not asked again");
    return null;
  }
}
