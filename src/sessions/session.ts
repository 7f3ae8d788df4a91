import { randomUUID } from "node:crypto";
import { z } from "zod";
import { askedOfSender } from "../access/pending.js";

/** One option of an offer: the opaque token a button sends back, the option and its label. */
export const OfferOptionSchema = z.object({
  token: z.string(),
  option: z.string(),
  label: z.string(),
});
export type OfferOption = z.infer<typeof OfferOptionSchema>;

/** The person a pending offer, argument or question was asked of: only their answer counts. */
export const AskedOfSchema = z.object({ id: z.string(), name: z.string().optional() });
export type AskedOf = z.infer<typeof AskedOfSchema>;

/**
 * A destructive call held for approval: the call, who asked for it, who must approve
 * (`by`, `needed` distinct people) and who has so far; `where: dm` when the approvers
 * were asked in their direct chats.
 */
export const ApprovalSchema = z.object({
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  question: z.string(),
  requester: AskedOfSchema.optional(),
  by: z.enum(["requester", "approvers"]).default("requester"),
  needed: z.number().int().min(1).default(1),
  approvedBy: z.array(z.object({ id: z.string(), name: z.string().optional(), at: z.number() })).default([]),
  where: z.enum(["room", "dm"]).default("room"),
  argumentsHash: z.string().optional(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

/**
 * An approval offer sent to an approver's direct chat for a call held in another room:
 * choosing an option here presses the same option there, as this approver.
 */
export const ForwardSchema = z.object({
  room: z.string(),
  /** The held call's offer tokens there, by option number. */
  tokens: z.array(z.string()),
  /** Where on the platform the other room is, to answer there. */
  origin: z.record(z.string(), z.unknown()),
  namespace: z.string(),
});
export type Forward = z.infer<typeof ForwardSchema>;

/** Options offered in one reply, pending until one is chosen or they expire (DESIGN §4). */
export const OfferSchema = z.object({
  id: z.string(),
  /** The question the options answer; a chosen tool is called with it. */
  question: z.string(),
  options: z.array(OfferOptionSchema),
  createdAt: z.number(),
  expiresAt: z.number(),
  /** Platform refs of the message(s) that carry the offer. */
  messageRefs: z.array(z.string()).default([]),
  chosen: z.object({ token: z.string(), label: z.string(), at: z.number() }).optional(),
  /** Set when the options are addresses a call-by-address tool named as candidates: choosing one calls it with these arguments. */
  callWith: z.record(z.string(), z.unknown()).optional(),
  /** Set when the offer asks to approve one destructive tool call (Approve / Deny). */
  approval: ApprovalSchema.optional(),
  /** Who the options were offered to; unset for offers made to the whole room. */
  askedOf: AskedOfSchema.optional(),
  /** Set on an approval asked in a direct chat for a call held in another room. */
  forward: ForwardSchema.optional(),
});
export type Offer = z.infer<typeof OfferSchema>;

/** One argument still to be asked for while filling a tool's arguments (DESIGN §5). */
export const MissingArgSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  type: z.string().optional(),
});
export type MissingArg = z.infer<typeof MissingArgSchema>;

/** Slot-filling state: a tool waiting for the person to supply its missing arguments. */
export const SlotStateSchema = z.object({
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  missing: z.array(MissingArgSchema).min(1),
  question: z.string(),
  createdAt: z.number(),
  /** Who the missing argument was asked of: only their next message fills it. */
  askedOf: AskedOfSchema.optional(),
});
export type SlotState = z.infer<typeof SlotStateSchema>;

/** One room's session record in Redis (DESIGN §7), parsed whenever it is read. */
/** A session written before slots belonged to people kept one `slot`: it becomes the one entry of `slots`. */
function fromOneSlot(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw) || !("slot" in raw)) return raw;
  const { slot, ...rest } = raw as Record<string, unknown>;
  return { ...rest, slots: (rest.slots as unknown[] | undefined) ?? (slot ? [slot] : []) };
}

export const SessionSchema = z.preprocess(
  fromOneSlot,
  z.object({
    conversationId: z.string(),
    namespace: z.string(),
    createdAt: z.number(),
    updatedAt: z.number(),
    /** Tools enabled beyond the router, additive for the conversation. */
    enabled: z.array(z.string()).default([]),
    offers: z.array(OfferSchema).default([]),
    /** Tools waiting for a missing argument, at most one per person asked (DESIGN §5). */
    slots: z.array(SlotStateSchema).default([]),
    turns: z.number().int().nonnegative().default(0),
    /** Ids of queued events a running turn already took out of band (answers, /cancel): their own turns do nothing. */
    taken: z.array(z.string()).default([]),
  }),
);
export type Session = z.infer<typeof SessionSchema>;

/** The slot waiting for `senderId`'s answer (one asked of nobody in particular counts for anyone). */
export function slotOf(session: Readonly<Session>, senderId: string): SlotState | undefined {
  return session.slots.find((s) => askedOfSender(s.askedOf, senderId));
}

/** One entry of the capped history: who said what, kept for `context`/`history` arguments. */
export const HistoryEntrySchema = z.object({
  role: z.enum(["user", "bot"]),
  text: z.string(),
  at: z.number(),
});
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;

/** A new, empty session for a room bound to `namespace`. */
export function newSession(namespace: string, now = Date.now()): Session {
  return {
    conversationId: randomUUID(),
    namespace,
    createdAt: now,
    updatedAt: now,
    enabled: [],
    offers: [],
    slots: [],
    turns: 0,
    taken: [],
  };
}
