import { z } from "zod";
import { PlatformSchema } from "./room.js";

/** Who sent an event, as the adapter saw them; `allowed` is the adapter's allowlist verdict. */
export const SenderSchema = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  allowed: z.boolean(),
});
export type Sender = z.infer<typeof SenderSchema>;

/** A text file a person sent, already downloaded and size-checked by the adapter. */
export const InboundFileSchema = z.object({
  name: z.string(),
  mime: z.string(),
  size: z.number().int().nonnegative(),
  /** The file's text when the adapter could read it as text within the size cap. */
  text: z.string().optional(),
  /** Why the adapter could not take the file (too large, not text), shown to the person. */
  rejected: z.string().optional(),
});
export type InboundFile = z.infer<typeof InboundFileSchema>;

const base = {
  /** Globally unique platform event id, used to de-duplicate (`tg:<bot>:<update_id>`, `mx:<event_id>`). */
  eventId: z.string().min(1),
  room: z.string().min(1),
  namespace: z.string(),
  platform: PlatformSchema,
  sender: SenderSchema,
  receivedAt: z.number(),
  /**
   * What the adapter needs to answer this event on its platform (chat id, message id,
   * callback query id, thread root). Opaque to the engine; the adapter parses it.
   */
  origin: z.record(z.string(), z.unknown()).default({}),
  /** The platform ref of the bot message this event replies to, so a reply chooses from that offer. */
  replyTo: z.string().optional(),
};

/** What started a turn that no person sent (DESIGN §8a): a schedule's fire, a webhook, a resource, a task. */
export const ProactiveSourceSchema = z.object({
  type: z.enum(["schedule", "hook", "resource"]),
  /** The schedule's id, the hook's name or the resource's uri. */
  name: z.string().min(1),
  /** When it fired or arrived (ms): a schedule's fire time, a hook's receipt, a resource's update. */
  at: z.number(),
});
export type ProactiveSource = z.infer<typeof ProactiveSourceSchema>;

/**
 * One normalised inbound event: what an adapter enqueues and a worker turns into a
 * turn. Platform types never appear here (Hubot's envelope).
 */
export const InboundEventSchema = z.discriminatedUnion("kind", [
  z.object({ ...base, kind: z.literal("message"), text: z.string() }),
  /** A button press or keycap reaction naming a pending choice by its opaque token. */
  z.object({ ...base, kind: z.literal("choice"), token: z.string() }),
  /** A keycap reaction on an offer message: the offer is known by the platform message it was sent as. */
  z.object({
    ...base,
    kind: z.literal("reaction"),
    messageRef: z.string(),
    number: z.number().int().positive(),
  }),
  z.object({ ...base, kind: z.literal("file"), file: InboundFileSchema }),
  /**
   * A turn no person started: `text` goes to the router as the question (never a
   * command or a choice); `read` names a resource to show instead, or to ask with.
   * Not counted against a person's turn limits; its source has its own cap.
   */
  z.object({
    ...base,
    kind: z.literal("proactive"),
    source: ProactiveSourceSchema,
    text: z.string(),
    read: z.object({ uri: z.string().min(1), then: z.enum(["show", "ask"]) }).optional(),
  }),
]);
export type InboundEvent = z.infer<typeof InboundEventSchema>;
