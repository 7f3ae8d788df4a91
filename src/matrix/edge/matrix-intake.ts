import { OrderedReads } from "../../edge/ordered-reads.js";
import { runSteps, type EdgeStep } from "../../edge/edge-steps.js";
import type { RoomEvent } from "../matrix-events.js";
import { classify } from "./classify.js";
import { cleartext } from "./cleartext.js";
import { MatrixEdgeContext, type Arrival } from "./edge-context.js";
import type { MatrixEdgeDeps } from "./edge-deps.js";
import { edit } from "./edit.js";
import { enqueue } from "./enqueue.js";
import { history } from "./history.js";
import { mention } from "./mention.js";
import { pairing } from "./pairing.js";
import { room } from "./room.js";
import { stranger } from "./stranger.js";
import { untrustedSender, type UntrustedReason } from "./untrusted.js";

/**
 * The Matrix edge, in order: each step handles the event (answers, refuses, queues or
 * drops it) or hands it to the next. Nothing before `stranger` does I/O but the room's
 * power levels (kept from sync) and Redis notice keys: a stranger gets at most one
 * refusal an hour, and nothing of theirs is fetched, downloaded, queued or stored.
 */
const EDGE_STEPS: readonly EdgeStep<MatrixEdgeContext>[] = [
  room,
  cleartext,
  classify,
  history,
  pairing,
  stranger,
  edit,
  mention,
  enqueue,
];

/** Where the receiver hands each room event, decrypted or in the clear: the steps above. */
export class MatrixIntake {
  private readonly deps: MatrixEdgeDeps;

  constructor(deps: Omit<MatrixEdgeDeps, "reads">) {
    this.deps = { ...deps, reads: new OrderedReads<string>() };
  }

  /** Takes one room event: enqueued, answered on the spot, refused, or dropped. */
  async receive(roomId: string, event: RoomEvent, arrival: Arrival): Promise<void> {
    await runSteps(EDGE_STEPS, new MatrixEdgeContext(roomId, event, arrival, this.deps));
  }

  /** An event whose sender the trust mode refused (matrix.trust): an allowed person's room is told once. */
  async untrusted(
    roomId: string,
    event: RoomEvent,
    reason: UntrustedReason,
    identity?: string,
  ): Promise<void> {
    await untrustedSender(this.deps, roomId, event, reason, identity);
  }

  /** Waits for the file reads in flight. */
  async drain(): Promise<void> {
    await this.deps.reads.drain();
  }
}
