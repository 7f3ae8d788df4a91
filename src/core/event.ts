import { z } from "zod";
import { OriginSchema, type Origin } from "./origin.js";
import { PlatformSchema } from "./room.js";

/** Who sent an event, as the adapter saw them; `allowed` is the adapter's allowlist verdict. */
export const SenderSchema = z.object({
  id: z.string().min(1),
  name: z.string().optional(),
  allowed: z.boolean(),
});
export type Sender = z.infer<typeof SenderSchema>;

/**
 * Why an event is for the bot, as the adapter decided it: a direct chat, a room bound
 * to take every message, a mention, a reply to the bot (or in its thread), a command,
 * or a button (a press or keycap reaction on the bot's own message); `proactive`: no
 * person at all (a schedule's fire, a webhook, a resource update).
 */
export const AddressedSchema = z.enum([
  "direct",
  "all",
  "mention",
  "reply",
  "command",
  "button",
  "proactive",
]);
export type Addressed = z.infer<typeof AddressedSchema>;

/**
 * The decision the adapter made at the edge, once, carried with the event: who sent it
 * and whether they are allowed, why it is for the bot, which room (and topic) it is in,
 * and where on the platform to answer. Consumers read it typed; nobody re-derives it.
 */
export const EdgeSchema = z.object({
  room: z.string().min(1),
  /** The topic within a chat that is a room of its own (a Telegram forum topic), when there is one. */
  topic: z.string().optional(),
  sender: SenderSchema,
  addressed: AddressedSchema,
  origin: OriginSchema,
});
export type Edge = z.infer<typeof EdgeSchema>;

/** What started a turn that no person sent (DESIGN §8a): a schedule's fire, a webhook, a resource update. */
export const ProactiveSourceSchema = z.object({
  type: z.enum(["schedule", "hook", "resource"]),
  /** The schedule's name, the hook's name or the resource's uri. */
  name: z.string().min(1),
  /** When it fired or arrived (ms): a schedule's fire time, a hook's receipt, a resource's update. */
  at: z.number(),
});
export type ProactiveSource = z.infer<typeof ProactiveSourceSchema>;

/**
 * A file a person sent: a text document the adapter already downloaded (`text`), or a
 * photo, voice note, audio file or other document left on the platform (`ref`) for the
 * worker to fetch when a tool takes it; sizes and types checked at the edge either way.
 */
export const InboundFileSchema = z.object({
  name: z.string(),
  mime: z.string(),
  size: z.number().int().nonnegative(),
  /** What the person sent it as; a document when unset. */
  kind: z.enum(["document", "photo", "voice", "audio"]).optional(),
  /** The platform's handle to fetch the file by (a Telegram file_id), when it was not read at the edge. */
  ref: z.string().optional(),
  /** The text sent with the file (a Telegram caption): the question that goes with it. */
  caption: z.string().optional(),
  /** The file's text when the adapter could read it as text within the size cap. */
  text: z.string().optional(),
  /** Why the adapter could not take the file (too large, not text), shown to the person. */
  rejected: z.string().optional(),
});
export type InboundFile = z.infer<typeof InboundFileSchema>;

/**
 * A held call relayed to an approver's direct chat: what to show, and how a decision
 * goes back (the held offer's tokens, pressed in `room` from `origin` as the approver).
 */
export const RelayedApprovalSchema = z.object({
  room: z.string(),
  offerId: z.string(),
  /** The held offer's Approve and Deny tokens. */
  tokens: z.array(z.string()).length(2),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  question: z.string(),
  requester: z.object({ id: z.string(), name: z.string().optional() }),
  needed: z.number().int().min(1),
  expiresAt: z.number(),
  /** Where the decision is pressed: the held room, as this approver. */
  origin: OriginSchema,
});
export type RelayedApproval = z.infer<typeof RelayedApprovalSchema>;

const base = {
  /** Globally unique platform event id, used to de-duplicate (`tg:<bot>:<update_id>`, `mx:<event_id>`). */
  eventId: z.string().min(1),
  namespace: z.string(),
  platform: PlatformSchema,
  receivedAt: z.number(),
  /** The platform ref of the bot message this event replies to, so a reply chooses from that offer. */
  replyTo: z.string().optional(),
  ...EdgeSchema.shape,
};

/**
 * Events queued by the previous release carry an untyped `origin` (no `platform`) and no
 * `addressed`; they are read as that release's gate admitted them. Kept for one release.
 */
function fromPreviousRelease(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const event = raw as Record<string, unknown>;
  const origin = event.origin;
  if (origin === null || typeof origin !== "object" || "platform" in origin) return raw;
  const topicId = (origin as { topicId?: unknown }).topicId;
  return {
    ...event,
    origin: { ...origin, platform: event.platform },
    addressed:
      event.addressed ?? (event.kind === "choice" || event.kind === "reaction" ? "button" : "direct"),
    ...(event.topic === undefined && typeof topicId === "number" ? { topic: String(topicId) } : {}),
  };
}

/**
 * One normalised inbound event: what an adapter enqueues and a worker turns into a
 * turn (Hubot's envelope): the edge record plus what was sent. Platform types never
 * appear here; the origin's platform is the event's.
 */
export const InboundEventSchema = z.preprocess(
  fromPreviousRelease,
  z
    .discriminatedUnion("kind", [
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
       * The person stopped the progress a running turn shows (Telegram's Stop on a draft):
       * `progress` is the platform's ref of what was stopped, so only the turn showing it stops.
       */
      z.object({ ...base, kind: z.literal("stop"), progress: z.string().min(1) }),
      /** A call held in another room, to be approved here (an approver's direct chat). */
      z.object({ ...base, kind: z.literal("approval"), approval: RelayedApprovalSchema }),
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
    ])
    .refine((event) => event.origin.platform === event.platform, {
      message: "the origin's platform is not the event's",
      path: ["origin", "platform"],
    }),
);
export type InboundEvent = z.infer<typeof InboundEventSchema>;

/** The event's origin when it is from `platform`, typed; undefined when it is another platform's. */
export function originOn<P extends Origin["platform"]>(
  event: { origin: Origin },
  platform: P,
): Extract<Origin, { platform: P }> | undefined {
  return event.origin.platform === platform ? (event.origin as Extract<Origin, { platform: P }>) : undefined;
}
