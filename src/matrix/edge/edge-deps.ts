import type { Inbox } from "../../core/adapter.js";
import type { Addressed } from "../../core/event.js";
import type { Logger } from "../../core/log.js";
import type { FloodGate } from "../../scheduler/flood-gate.js";
import type { OrderedReads } from "../../edge/ordered-reads.js";
import type { PairingGate } from "../../access/pairing-gate.js";
import type { Classified } from "../classify-event.js";
import type { RoomLevels } from "../room-levels.js";
import type { EdgeNotices } from "../edge-notices.js";
import type { EditReview } from "../edit-review.js";
import type { EncryptionPolicy } from "../encryption-policy.js";
import type { InboundBuilder } from "../inbound-builder.js";
import type { MentionGate } from "../mention-gate.js";
import type { MatrixOutageNotices } from "../outage-notices.js";
import type { RoomBinding } from "../room-policy.js";

/** A readable event the engine may see: a message, a reaction or a file. */
export type Readable = Extract<Classified, { type: "message" | "reaction" | "file" }>;

/** An admitted event with why it is for the bot, for the edge record. */
export type AdmittedEvent = Readable & { addressed: Addressed };

/** What the steps of the Matrix edge read besides the event (`ctx.deps`). */
export interface MatrixEdgeDeps {
  botUserId: string;
  bindings: ReadonlyMap<string, RoomBinding>;
  policy: EncryptionPolicy;
  levels: RoomLevels;
  maxFileBytes: number;
  notices: EdgeNotices;
  /** Who is told that their message waits for Redis. */
  outage: MatrixOutageNotices;
  gate: MentionGate;
  edits: EditReview;
  builder: InboundBuilder;
  inbox: Inbox;
  /** Inbound flood control; without it nothing is limited. */
  flood?: FloodGate;
  /** `/pair <code>`, taken before the allowlist. */
  pairing?: PairingGate;
  /** Users `/pair` added to the rooms' bindings. */
  paired?: (binding: string, senderId: string) => boolean;
  /** File reads in flight, off the sync loop. */
  reads: OrderedReads<string>;
  log: Logger;
}
