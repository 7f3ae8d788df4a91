import { randomUUID } from "node:crypto";
import { z } from "zod";

/** One option of an offer: the opaque token a button sends back, the option and its label. */
export const OfferOptionSchema = z.object({
  token: z.string(),
  option: z.string(),
  label: z.string(),
});
export type OfferOption = z.infer<typeof OfferOptionSchema>;

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
  approval: z
    .object({ tool: z.string(), args: z.record(z.string(), z.unknown()), question: z.string() })
    .optional(),
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
});
export type SlotState = z.infer<typeof SlotStateSchema>;

/** One room's session record in Redis (DESIGN §7), parsed whenever it is read. */
export const SessionSchema = z.object({
  conversationId: z.string(),
  namespace: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** Tools enabled beyond the router, additive for the conversation. */
  enabled: z.array(z.string()).default([]),
  offers: z.array(OfferSchema).default([]),
  slot: SlotStateSchema.nullable().default(null),
  turns: z.number().int().nonnegative().default(0),
  /** Ids of queued events a running turn already took out of band (answers, /cancel): their own turns do nothing. */
  taken: z.array(z.string()).default([]),
});
export type Session = z.infer<typeof SessionSchema>;

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
    slot: null,
    turns: 0,
    taken: [],
  };
}
