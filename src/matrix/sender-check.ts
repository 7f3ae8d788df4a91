import type { MatrixConfig } from "../core/config.js";
import { originOn, type InboundEvent } from "../core/event.js";
import { matrixRoom } from "../core/room.js";
import { roomBindings } from "./room-policy.js";

/**
 * The worker's own check of a queued Matrix event against the bindings as configured
 * now: the room must be bound to the event's namespace and the sender listed. A room that
 * also admits by power level cannot be checked without its state, so there the receiver's
 * verdict (made from the power levels it keeps current from sync) stands for others.
 */
export function matrixSenderCheck(
  matrix: MatrixConfig,
  paired?: (binding: string, senderId: string) => boolean,
): (event: InboundEvent) => boolean {
  const bindings = roomBindings(matrix);
  return (event) => {
    const origin = originOn(event, "matrix");
    const binding = origin ? bindings.get(origin.roomId) : undefined;
    const room = matrixRoom(binding?.roomId ?? "", origin?.threadRoot);
    if (!binding || binding.namespace !== event.namespace || event.room !== room) return false;
    // No person: the room being bound to the event's namespace is the whole check.
    if (event.kind === "proactive") return true;
    return (
      binding.users.has(event.sender.id) ||
      (paired?.(binding.name, event.sender.id) ?? false) ||
      (binding.powerLevel !== undefined && event.sender.allowed)
    );
  };
}
