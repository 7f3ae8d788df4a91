import { z } from "zod";

/**
 * The scheduler scripts' argument tables (src/scheduler/lua), one schema per script: each
 * field is named in the script's header under ARGS and read in Lua as `A.<name>`. They
 * are the types of the typed calls (src/scheduler/scheduler-scripts.ts); the values are
 * built by this process, so they are not parsed again on the way out.
 */

/**
 * A turn's commit as the fenced scripts apply it (fence.lua `apply_commit`): the
 * session (left out when the holder's is unchanged and was written lately), history
 * entries to append, the outcome and the event it answers, and why the turn is set
 * aside when it is (kept in the turn record beside the outcome).
 */
export const CommitSchema = z.object({
  session: z.string().optional(),
  idleSeconds: z.number(),
  append: z.array(z.string()),
  historyCap: z.number(),
  reset: z.boolean(),
  outcome: z.string(),
  eventId: z.string(),
  /** Why the turn is set aside (its line is delivered, then it goes to the dead letters), if it is. */
  quarantine: z.string().optional(),
});
export type CommitRecord = z.infer<typeof CommitSchema>;

/**
 * What a turn buffers until its next fenced call: its commit, parts recorded sent (part →
 * message ref), and parts whose attempt the platform refused (part → the `sending:` mark
 * to put back: an earlier holder's attempt with no recorded answer, or "" for none).
 */
export interface TurnWrites {
  commit?: CommitRecord | undefined;
  sent?: Record<string, string> | undefined;
  notSent?: Record<string, string> | undefined;
}

const Writes = {
  commit: CommitSchema.optional(),
  sent: z.record(z.string(), z.string()).optional(),
  notSent: z.record(z.string(), z.string()).optional(),
};

/** The flood limits an enqueue checks, for one person. */
export interface FloodArgs {
  userId: string;
  turnsPerMinute: number;
  roomQueueCap: number;
}

/** What an enqueue queues: one event for one room of a lane. */
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
  /** Ms a room whose lease expired is still left to its holder (Redis refused writes lately), if any. */
  takeoverHoldMs?: number;
}

/** A room held under a lease: the fencing token every write carries. */
export interface LeaseRef {
  room: string;
  lane: string;
  token: string;
}

/** enqueue-events.lua */
export const EnqueueEventsArgsSchema = z.object({
  dedupeMs: z.number(),
  events: z.array(
    z.object({
      room: z.string(),
      id: z.string(),
      entry: z.string(),
      inboxKey: z.number(),
      signal: z.string(),
      flood: z
        .object({
          counterKey: z.number(),
          noticeQueueKey: z.number(),
          noticeRateKey: z.number(),
          perMinute: z.number(),
          cap: z.number(),
        })
        .optional(),
    }),
  ),
  claims: z
    .array(
      z.object({
        room: z.string(),
        token: z.string(),
        leaseMs: z.number(),
        turnRecordMs: z.number(),
        takeoverHoldMs: z.number().optional(),
        leaseKey: z.number(),
        inboxKey: z.number(),
        sessionKey: z.number(),
        turnKey: z.number(),
      }),
    )
    .optional(),
});

/** check-flood.lua */
export const CheckFloodArgsSchema = z.object({ perMinute: z.number(), cap: z.number() });

/** claim-room.lua */
export const ClaimArgsSchema = z.object({
  room: z.string(),
  token: z.string(),
  leaseMs: z.number(),
  turnRecordMs: z.number(),
  takeoverHoldMs: z.number().optional(),
});

/** peek-shard.lua */
export const PeekArgsSchema = z.object({ limit: z.number() });

/** turn-step.lua */
export const StepArgsSchema = z.object({
  room: z.string(),
  token: z.string(),
  ...Writes,
  part: z.string().optional(),
});

/** finish-turn.lua */
export const FinishArgsSchema = z.object({
  room: z.string(),
  token: z.string(),
  head: z.string(),
  commit: CommitSchema.optional(),
  session: z.string().optional(),
  offerLinks: z.record(z.string(), z.string()).optional(),
  idleSeconds: z.number(),
  draining: z.boolean(),
  wantHistory: z.boolean(),
  historyCap: z.number(),
  turnRecordMs: z.number(),
});

/** What becomes of a turn that cannot go on now (park-turn.lua): wait, retry later, or dead letter at once. */
export const ParkVerdictSchema = z.enum(["wait", "retry", "dead"]);
export type ParkVerdict = z.infer<typeof ParkVerdictSchema>;

/** park-turn.lua */
export const ParkArgsSchema = z.object({
  room: z.string(),
  lane: z.string(),
  token: z.string(),
  ...Writes,
  booked: z.object({ part: z.string(), member: z.string() }).optional(),
  head: z.string(),
  delayMs: z.number(),
  verdict: ParkVerdictSchema,
  reason: z.string(),
  deadlineMs: z.number(),
  letterId: z.string(),
  turnRecordMs: z.number(),
});

/** release-room.lua */
export const ReleaseArgsSchema = z.object({ room: z.string(), token: z.string() });

/** renew-leases.lua */
export const RenewArgsSchema = z.object({
  leaseMs: z.number(),
  leases: z.array(z.object({ room: z.string(), token: z.string(), leaseKey: z.number() })),
});

/** requeue-dead-letter.lua */
export const RequeueArgsSchema = z.object({ id: z.string(), room: z.string(), entry: z.string() });
