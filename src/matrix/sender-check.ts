import type { MatrixConfig } from "../core/config.js";
import type { InboundEvent } from "../core/event.js";
import { matrixRoom } from "../core/room.js";
import { MatrixOriginSchema } from "./matrix-events.js";
import { roomBindings } from "./room-policy.js";

/**
 * The worker's own check of a queued Matrix event against the bindings as configured
 * now: the room must be bound to the event's namespace and the sender listed. A room that
 * also admits by power level cannot be checked without its state, so there the receiver's
 * verdict (made from the power levels it keeps current from sync) stands for others.
 */
export function matrixSenderCheck(matrix: MatrixConfig): (event: InboundEvent) => boolean {
  const bindings = roomBindings(matrix);
  return (event) => {
    if (event.kind === "proactive") {
      // No person: the room itself must still be bound to the event's namespace.
      const bound = bindings.get(event.room.slice("matrix:".length));
      return bound !== undefined && bound.namespace === event.namespace;
    }
    const origin = MatrixOriginSchema.safeParse(event.origin);
    const binding = origin.success ? bindings.get(origin.data.roomId) : undefined;
    if (!binding || binding.namespace !== event.namespace || event.room !== matrixRoom(binding.roomId))
      return false;
    return binding.users.has(event.sender.id) || (binding.powerLevel !== undefined && event.sender.allowed);
  };
}
