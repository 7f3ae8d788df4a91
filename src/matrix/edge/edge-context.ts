import type { Logger } from "../../core/log.js";
import type { Classified } from "../classify-event.js";
import type { RoomEvent } from "../matrix-events.js";
import type { AdmittedEvent, MatrixEdgeDeps } from "./edge-deps.js";
import type { RoomBinding } from "../room-policy.js";

/** How an event reached the edge: whether it was history on arrival, and whether it came encrypted. */
export interface Arrival {
  history: boolean;
  encrypted: boolean;
}

/** A step read what an earlier step decides before that step ran: the chain is out of order. */
export class MatrixEdgeOrderError extends Error {
  constructor(
    readonly eventId: string,
    readonly missing: string,
  ) {
    super(`matrix edge: event ${eventId} reached a step that needs its ${missing} before it was decided`);
    this.name = "MatrixEdgeOrderError";
  }
}

/**
 * One room event on its way through the Matrix edge (src/matrix/edge/): the event, how
 * it arrived, the edge's parts (`deps`), and what the steps decide for the steps after
 * them — the room's binding, what the event is, and why it is for the bot.
 */
export class MatrixEdgeContext {
  readonly log: Logger;
  /** The content read for mentions: the event's, or an edit's new content once the edit step took it. */
  content: Record<string, unknown>;
  private bound: RoomBinding | undefined;
  private kind: Classified | undefined;
  private taken: AdmittedEvent | undefined;

  constructor(
    readonly roomId: string,
    readonly event: RoomEvent,
    readonly arrival: Arrival,
    readonly deps: MatrixEdgeDeps,
  ) {
    this.log = deps.log.child({ roomId, eventId: event.event_id });
    this.content = event.content;
  }

  /** The room's binding (the room step). */
  get binding(): RoomBinding {
    return this.bound ?? this.missing("binding");
  }
  set binding(binding: RoomBinding) {
    this.bound = binding;
  }

  /** What the event is (the classify step; the edit step makes an edit asked again a message). */
  get classified(): Classified {
    return this.kind ?? this.missing("classification");
  }
  set classified(classified: Classified) {
    this.kind = classified;
  }

  /** The event as admitted, with why it is for the bot (the mention step). */
  get admitted(): AdmittedEvent {
    return this.taken ?? this.missing("admission");
  }
  set admitted(admitted: AdmittedEvent) {
    this.taken = admitted;
  }

  /** The thread a notice to this event answers in (none for a reaction or an edit). */
  get thread(): string | undefined {
    const c = this.kind;
    return c?.type === "message" || c?.type === "file" ? c.threadRoot : undefined;
  }

  /** One notice in reply to this event, in its thread. */
  async say(text: string): Promise<void> {
    await this.deps.notices.say(this.roomId, this.event.event_id, this.event.sender, text, this.thread);
  }

  private missing(what: string): never {
    throw new MatrixEdgeOrderError(this.event.event_id, what);
  }
}
