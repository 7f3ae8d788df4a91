import type { RoomEvent } from "../matrix-events.js";
import { isAllowed } from "../room-policy.js";
import type { MatrixEdgeDeps } from "./edge-deps.js";

/** Why an encrypted event was not read although its key is there: the trust mode refuses its sender. */
export type UntrustedReason = "untrusted-device" | "identity-changed";

/**
 * An allowed person's message that matrix.trust refused (sent from a device its owner did
 * not cross-sign, or by an identity that changed since it was pinned): the room is told
 * once and the operator gets a log line. A stranger's gets nothing, as anything else of theirs.
 */
export async function untrustedSender(
  deps: MatrixEdgeDeps,
  roomId: string,
  event: RoomEvent,
  reason: UntrustedReason,
  identity: string | undefined,
): Promise<void> {
  const binding = deps.bindings.get(roomId);
  if (!binding || !deps.policy.serves(roomId)) return;
  const levels = binding.powerLevel === undefined ? undefined : await deps.levels.of(roomId);
  if (!isAllowed(binding, event.sender, levels, deps.paired)) return;
  if (!(await deps.notices.untrusted(roomId, event.event_id, event.sender, reason, identity))) return;
  deps.log.warn(
    { roomId, eventId: event.event_id, sender: event.sender, reason },
    reason === "identity-changed"
      ? "matrix: a person's identity changed since it was pinned; not answering them in encrypted rooms until `roomgate matrix trust` re-pins it"
      : "matrix: a message from a device its owner did not cross-sign was not read (matrix.trust: cross-signed)",
  );
}
