import { z } from "zod";
import { RefSchema } from "./answer.js";
import { AttachmentSchema } from "./attachment.js";

/**
 * One block of a neutral reply. `answer` is a namespace's Answer shown verbatim;
 * `text` is the bot's own words; `code` is a tool's raw text shown monospace.
 */
export const BlockSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("answer"),
    ok: z.boolean(),
    answer: z.string(),
    items: z.array(RefSchema),
    caveat: z.string().nullish(),
  }),
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({ type: z.literal("code"), text: z.string() }),
]);
export type Block = z.infer<typeof BlockSchema>;

/** One option offered as a button: the label shown and the opaque token a press sends back. */
export const ReplyOptionSchema = z.object({
  token: z.string().min(1).max(32),
  label: z.string(),
});
export type ReplyOption = z.infer<typeof ReplyOptionSchema>;

/**
 * The platform-neutral reply the engine returns: blocks in order, then options
 * (numbered from 1 in this order). Renderers turn it into platform messages.
 */
export const ReplySchema = z.object({
  blocks: z.array(BlockSchema),
  options: z.array(ReplyOptionSchema).default([]),
  /** Id of the offer the options belong to, so a sender can link the sent message to it. */
  offerId: z.string().optional(),
  /** Files sent after the text (images as photos, other content as documents). */
  attachments: z.array(AttachmentSchema).optional(),
  /**
   * Asked of one member (their pending argument, approval, question): a platform that can
   * shows the reply to them alone, and the room `note` instead; elsewhere, or when that
   * fails, the room sees the reply as it always did.
   */
  personal: z
    .object({
      to: z.object({ id: z.string().min(1), name: z.string().optional() }),
      note: z.string().optional(),
    })
    .optional(),
});
export type Reply = z.infer<typeof ReplySchema>;

/**
 * Everything one turn asks the platform to do: the reply, a short toast for a
 * button press, and which offer message to mark as chosen.
 */
export const TurnOutcomeSchema = z.object({
  reply: ReplySchema.nullable(),
  toast: z.string().optional(),
  chosen: z.object({ offerId: z.string(), label: z.string(), messageRefs: z.array(z.string()) }).optional(),
});
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;
