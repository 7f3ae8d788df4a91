/**
 * The named arguments of the scheduler's typed script calls (src/queue/scheduler-scripts.ts),
 * apart so that the lease, the gate and the inbox name them without the scripts.
 */

/** The flood limits an enqueue checks, for one person. */
export interface FloodArgs {
  userId: string;
  turnsPerMinute: number;
  roomQueueCap: number;
}

/** What enqueue-event.lua queues: one event for one room of a lane. */
export interface EnqueueArgs {
  room: string;
  lane: string;
  eventId: string;
  entry: string;
  dedupeMs: number;
  flood?: FloodArgs;
}

/** The lease a claim takes a room under. */
export interface ClaimArgs {
  token: string;
  leaseMs: number;
  turnRecordMs: number;
}

/** The writes a turn buffers until its next fenced call (JSON, "" for none). */
export interface TurnWrites {
  commit: string;
  sent: string;
}

/** A room held under a lease: the fencing token every write carries. */
export interface LeaseRef {
  room: string;
  lane: string;
  token: string;
}
