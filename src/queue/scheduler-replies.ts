import { z } from "zod";
import { FloodLimitSchema } from "../core/admission.js";

/**
 * The scheduler scripts' replies (src/queue/lua), parsed from the flat arrays Lua
 * returns into discriminated unions on `kind`. Each script's header documents the
 * array; these schemas are the only place that reads positions.
 */

const flag = z.union([z.literal(0), z.literal(1)]).transform((n) => n === 1);
const nullableText = z.string().nullable();
const flatRecord = z.array(z.string()).transform(toRecord);

/** A flat HGETALL list as an object. */
function toRecord(flat: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!;
  return record;
}

/** A flood refusal (flood.lua): which limit, and whether its one notice is due now. */
const Refused = z
  .tuple([z.literal("refused"), FloodLimitSchema, flag])
  .transform(([, limit, noticeDue]) => ({ kind: "refused" as const, limit, noticeDue }));

/** enqueue-event.lua */
export const EnqueueReplySchema = z.union([
  z
    .tuple([z.literal("queued"), flag])
    .transform(([, becamePending]) => ({ kind: "queued" as const, becamePending })),
  z.tuple([z.literal("duplicate")]).transform(() => ({ kind: "duplicate" as const })),
  Refused,
]);
export type EnqueueReply = z.infer<typeof EnqueueReplySchema>;

/** check-flood.lua */
export const FloodReplySchema = z.union([
  z.tuple([z.literal("admitted")]).transform(() => ({ kind: "admitted" as const })),
  Refused,
]);
export type FloodReply = z.infer<typeof FloodReplySchema>;

/** claim-room.lua */
export const ClaimReplySchema = z.union([
  z
    .tuple([z.literal("claimed"), z.string(), nullableText, flatRecord, flag, z.number()])
    .transform(([, head, session, record, takeover, now]) => ({
      kind: "claimed" as const,
      head,
      session,
      record,
      takeover,
      now,
    })),
  z.tuple([z.literal("later"), z.number()]).transform(([, dueInMs]) => ({ kind: "later" as const, dueInMs })),
  z.tuple([z.literal("held")]).transform(() => ({ kind: "held" as const })),
  z.tuple([z.literal("gone")]).transform(() => ({ kind: "gone" as const })),
]);
export type ClaimReply = z.infer<typeof ClaimReplySchema>;

/** peek-shard.lua */
export const PeekReplySchema = z
  .tuple([z.array(z.string()), z.array(z.string()), z.number(), z.string()])
  .transform(([due, expired, next, nextRoom]) => ({
    due,
    expired,
    nextInMs: next < 0 ? undefined : next,
    /** The pending room coming due next, when that is what comes next ("" otherwise). */
    nextRoom,
  }));
export type PeekReply = z.infer<typeof PeekReplySchema>;

/** turn-step.lua */
export const StepReplySchema = z.union([
  z.tuple([z.literal("stepped")]).transform(() => ({ kind: "stepped" as const })),
  z.tuple([z.literal("lost")]).transform(() => ({ kind: "lost" as const })),
]);
export type StepReply = z.infer<typeof StepReplySchema>;

/** finish-turn.lua */
export const FinishReplySchema = z.union([
  z.tuple([z.literal("lost")]).transform(() => ({ kind: "lost" as const })),
  z
    .tuple([z.literal("released"), flag])
    .transform(([, leftPending]) => ({ kind: "released" as const, leftPending })),
  z
    .tuple([z.literal("next"), z.string(), nullableText, flatRecord, z.array(z.string()), z.number()])
    .transform(([, head, session, record, history, now]) => ({
      kind: "next" as const,
      head,
      session,
      record,
      history,
      now,
    })),
]);
export type FinishReply = z.infer<typeof FinishReplySchema>;

/** park-turn.lua */
export const ParkReplySchema = z.union([
  z.tuple([z.literal("lost")]).transform(() => ({ kind: "lost" as const })),
  z
    .tuple([z.literal("parked"), z.number(), z.number()])
    .transform(([, waitedMs, attempts]) => ({ kind: "parked" as const, waitedMs, attempts })),
  z
    .tuple([z.literal("dead"), z.number(), z.number(), flag])
    .transform(([, waitedMs, attempts, leftPending]) => ({
      kind: "dead" as const,
      waitedMs,
      attempts,
      leftPending,
    })),
  z.tuple([z.literal("over"), flag]).transform(([, leftPending]) => ({ kind: "over" as const, leftPending })),
]);
export type ParkReply = z.infer<typeof ParkReplySchema>;

/** release-room.lua */
export const ReleaseReplySchema = z.union([
  z.tuple([z.literal("lost")]).transform(() => ({ kind: "lost" as const })),
  z
    .tuple([z.literal("released"), flag])
    .transform(([, leftPending]) => ({ kind: "released" as const, leftPending })),
]);
export type ReleaseReply = z.infer<typeof ReleaseReplySchema>;

/** renew-leases.lua: one flag per room. */
export const RenewReplySchema = z.array(flag);

/** requeue-dead-letter.lua */
export const RequeueReplySchema = z.union([
  z
    .tuple([z.literal("requeued"), flag])
    .transform(([, becamePending]) => ({ kind: "requeued" as const, becamePending })),
  z.tuple([z.literal("missing")]).transform(() => ({ kind: "missing" as const })),
]);
export type RequeueReply = z.infer<typeof RequeueReplySchema>;
