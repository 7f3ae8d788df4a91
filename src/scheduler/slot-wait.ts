import { LeaseLostError, SendDeferredError } from "../core/delivery-errors.js";
import type { RoomLease } from "./room-lease.js";
import type { TurnGate } from "./turn-gate.js";

/**
 * Waits `ms` for a booked send slot while the room stays held (its lease renewed),
 * outside the worker's slots while few enough rooms wait so; false when the wait is
 * longer than half a lease or the worker is stopping, and the turn parks.
 */
export type SlotPause = (ms: number) => Promise<boolean>;

/**
 * Runs a turn's delivery; a part whose send slot was booked for later is waited for
 * in place when `pause` allows, and the delivery goes on with the same gate (what
 * was sent stays recorded in it, the booking is asked for by its member). Parking
 * instead costs a park, a second claim and a re-read of the turn: most of a turn's
 * Redis work again, for every booked send of a paced backlog. Anything else that
 * defers the turn (a 429, a wait too long) is thrown for the runner to park.
 */
export async function deliverWaitingForSlots<T>(
  deliver: () => Promise<T>,
  gate: TurnGate,
  held: RoomLease,
  pause: SlotPause | undefined,
): Promise<T> {
  for (;;) {
    try {
      return await deliver();
    } catch (err) {
      if (!(err instanceof SendDeferredError) || !gate.bookedSlot() || !pause) throw err;
      if (!(await pause(err.waitMs))) throw err;
      if (held.lost) throw new LeaseLostError(held.room);
    }
  }
}
