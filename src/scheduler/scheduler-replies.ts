import { z } from "zod";
import { FloodLimitSchema } from "../core/admission.js";

/**
 * The scheduler scripts' replies (src/scheduler/lua): each script packs one table, named
 * in its header's REPLY, and these schemas read it into a discriminated union on
 * `kind`. Redis' cmsgpack packs an empty table as an empty list, so the maps below
 * accept one.
 */

/** A string map from Lua (a turn record): an empty one arrives as an empty list. */
const luaMap = z.preprocess(
  (v) => (Array.isArray(v) && v.length === 0 ? {} : v),
  z.record(z.string(), z.string()),
);

/** A list from Lua (possibly absent when empty). */
const luaList = <T extends z.ZodType>(item: T) => z.array(item).default([]);

/** A flood refusal (flood.lua): which limit, and whether its one notice is due now. */
const Refused = z.object({ kind: z.literal("refused"), limit: FloodLimitSchema, noticeDue: z.boolean() });

/** What one event of an enqueue got (enqueue-events.lua). */
export const EnqueueReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("queued"), becamePending: z.boolean() }),
  z.object({ kind: z.literal("duplicate") }),
  Refused,
]);
export type EnqueueReply = z.infer<typeof EnqueueReplySchema>;

/** check-flood.lua */
export const FloodReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("admitted") }),
  Refused,
]);
export type FloodReply = z.infer<typeof FloodReplySchema>;

/** claim-room.lua, and each claim of enqueue-events.lua (claim.lua). */
export const ClaimReplySchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("claimed"),
    head: z.string(),
    session: z
      .string()
      .optional()
      .transform((s) => s ?? null),
    record: luaMap,
    takeover: z.boolean(),
    now: z.number(),
  }),
  z.object({ kind: z.literal("later"), dueInMs: z.number() }),
  z.object({ kind: z.literal("held") }),
  z.object({ kind: z.literal("gone") }),
]);
export type ClaimReply = z.infer<typeof ClaimReplySchema>;

/** enqueue-events.lua: each event's outcome, and each claim's, in order. */
export const EnqueueEventsReplySchema = z.object({
  events: luaList(EnqueueReplySchema),
  claims: luaList(ClaimReplySchema),
});
export type EnqueueEventsReply = z.infer<typeof EnqueueEventsReplySchema>;

/** peek-shard.lua */
export const PeekReplySchema = z.object({
  due: luaList(z.string()),
  expired: luaList(z.string()),
  nextInMs: z.number().optional(),
  /** The pending room coming due next, when that is what comes next. */
  nextRoom: z.string().optional(),
});
export type PeekReply = z.infer<typeof PeekReplySchema>;

/** turn-step.lua */
export const StepReplySchema = z.object({ kind: z.enum(["stepped", "lost"]) });
export type StepReply = z.infer<typeof StepReplySchema>;

/** finish-turn.lua */
export const FinishReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("lost") }),
  z.object({ kind: z.literal("released"), leftPending: z.boolean() }),
  z.object({
    kind: z.literal("next"),
    head: z.string(),
    history: luaList(z.string()),
    /** This finish had been applied already: the next turn's record and session as they are. */
    again: z.boolean(),
    record: luaMap.optional(),
    session: z.string().optional(),
    now: z.number(),
  }),
]);
export type FinishReply = z.infer<typeof FinishReplySchema>;

/** park-turn.lua */
export const ParkReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("lost") }),
  z.object({ kind: z.literal("parked"), waitedMs: z.number(), attempts: z.number() }),
  z.object({ kind: z.literal("dead"), waitedMs: z.number(), attempts: z.number(), leftPending: z.boolean() }),
  z.object({ kind: z.literal("over"), leftPending: z.boolean() }),
]);
export type ParkReply = z.infer<typeof ParkReplySchema>;

/** release-room.lua */
export const ReleaseReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("lost") }),
  z.object({ kind: z.literal("released"), leftPending: z.boolean() }),
]);
export type ReleaseReply = z.infer<typeof ReleaseReplySchema>;

/** renew-leases.lua: one flag per lease, in order. */
export const RenewReplySchema = z.object({ renewed: luaList(z.boolean()) });
export type RenewReply = z.infer<typeof RenewReplySchema>;

/** requeue-dead-letter.lua */
export const RequeueReplySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("requeued"), becamePending: z.boolean() }),
  z.object({ kind: z.literal("missing") }),
]);
export type RequeueReply = z.infer<typeof RequeueReplySchema>;
