import type { Addressed } from "../core/event.js";
import type { Logger } from "../core/log.js";
import { ignoredTotal } from "../ops/metrics.js";
import type { Classified } from "./classify-event.js";
import type { EditReview } from "./edit-review.js";
import type { RoomEvent } from "./matrix-events.js";
import type { GatedMessage, MentionGate } from "./mention-gate.js";
import type { RoomBinding } from "./room-policy.js";

/** What the receiver hands the builder: a message, a reaction or a file. */
export type Admitted = Extract<Classified, { type: "message" | "reaction" | "file" }>;

/** An admitted event with why it is for the bot, for the edge record. */
export type AdmittedEvent = Admitted & { addressed: Addressed };

/**
 * Decides which readable events of a bound room go on to the namespace: edits are
 * reviewed (asked again or logged), messages and files pass the mention gate;
 * reactions name an offer of the bot's and always pass.
 */
export class MessageAdmission {
  constructor(
    private readonly gate: MentionGate,
    private readonly edits: EditReview,
    private readonly log: Logger,
  ) {}

  /**
   * Whether an event of a person who is not allowed is addressed to the bot, decided
   * without any I/O, so that only those get the refusal and the rest are ignored.
   */
  addressedOffline(
    binding: RoomBinding,
    event: RoomEvent,
    classified: Admitted | Extract<Classified, { type: "edit" }>,
  ): boolean {
    if (classified.type === "reaction") return true;
    if (classified.type === "edit") return false;
    const text = classified.type === "message" ? classified.text : "";
    return this.gate.checkOffline(binding, { text, content: event.content });
  }

  /** The event to build, or null when it is not for the bot. */
  async admit(
    binding: RoomBinding,
    event: RoomEvent,
    classified: Admitted | Extract<Classified, { type: "edit" }>,
  ): Promise<AdmittedEvent | null> {
    if (classified.type === "reaction") return { ...classified, addressed: "button" };
    let message: GatedMessage;
    if (classified.type === "edit") {
      const edited = await this.edits.review(binding.roomId, event, classified);
      if (!edited) return null;
      message = edited;
    } else {
      message = {
        text: classified.type === "message" ? classified.text : "",
        content: event.content,
        ...(classified.replyTo ? { replyTo: classified.replyTo } : {}),
        ...(classified.threadRoot ? { threadRoot: classified.threadRoot } : {}),
      };
    }
    const verdict = await this.gate.check(binding, message);
    if (!verdict.addressed) {
      ignoredTotal.inc({ platform: "matrix", reason: "not_addressed" });
      this.log.debug(
        { roomId: binding.roomId, eventId: event.event_id },
        "matrix: message not addressed to the bot",
      );
      return null;
    }
    if (classified.type === "file") return { ...classified, addressed: verdict.addressed };
    const { replyTo, threadRoot } = message;
    return {
      type: "message",
      addressed: verdict.addressed,
      text: verdict.text,
      ...(replyTo ? { replyTo } : {}),
      ...(threadRoot ? { threadRoot } : {}),
    };
  }
}
