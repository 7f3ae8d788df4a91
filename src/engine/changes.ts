import type { Attachment } from "../core/attachment.js";
import type { Block, Reply, TurnOutcome } from "../core/reply.js";
import type { AskedOf, HistoryEntry, Offer, Session, SlotState } from "../sessions/session.js";

/** How many offers a session keeps at most; older ones are dropped first. */
const MAX_OFFERS = 10;
/** How many taken event ids a session keeps: far more than can queue behind one turn. */
const MAX_TAKEN = 50;

/**
 * One thing a step changes, as a value: what the reply shows, what the session keeps,
 * what the platform is asked to do. Steps return lists of these; `applyChanges` is the
 * one place they take effect.
 */
export type Change =
  /** Blocks of the reply: the bot's own words, an Answer or a tool's text. */
  | { type: "say"; blocks: readonly Block[] }
  /** Files sent after the reply's text (a tool's images, audio, blobs, long output). */
  | { type: "attach"; attachments: readonly Attachment[] }
  /** What was said, for the `context`/`history` arguments of later turns. */
  | { type: "remember"; entry: HistoryEntry }
  /** Tools added to the room's enabled set (additive for the conversation, DESIGN §6). */
  | { type: "enable"; tools: readonly string[] }
  /** One person's slot filling starts, moves on to the next argument, or ends (`null`). */
  | { type: "slot"; owner: string; slot: SlotState | null }
  /** A new pending offer: kept in the session; its options go on the reply as buttons (unless `quiet`). */
  | { type: "offer"; offer: Offer; quiet?: boolean }
  /** One more person approved a held call that needs several approvals. */
  | { type: "approve"; offerId: string; by: { id: string; name?: string; at: number } }
  /** An option was chosen: its offer is used up, and the platform marks the offer's message. */
  | { type: "chosen"; offerId: string; token: string; label: string; at: number; messageRefs: string[] }
  /** A short notice for a button press (Telegram's callback answer). */
  | { type: "toast"; text: string }
  /** A new conversation: the session starts over and the history is dropped. */
  | { type: "reset"; session: Session }
  /** Queued events a running turn took out of band (an answer, a /cancel): their own turns do nothing. */
  | { type: "take"; eventIds: readonly string[] }
  /** A taken event's own turn came: its mark is dropped. */
  | { type: "untake"; eventId: string }
  /** The turn's reply is asked of one member: theirs alone where the platform can, `note` for the room. */
  | { type: "personal"; to: AskedOf; note?: string };

/** The bot's own words, shown verbatim. */
export const say = (text: string): Change => ({ type: "say", blocks: [{ type: "text", text }] });
/** Blocks from a namespace (an Answer or a tool's text). */
export const show = (blocks: readonly Block[]): Change => ({ type: "say", blocks });
export const attach = (attachments: readonly Attachment[]): Change => ({ type: "attach", attachments });
export const remember = (role: HistoryEntry["role"], text: string): Change => ({
  type: "remember",
  entry: { role, text, at: Date.now() },
});
export const enable = (tools: readonly string[]): Change => ({ type: "enable", tools });
/** Sets (or with `null` ends) the slot waiting for `owner`'s answer. */
export const setSlot = (owner: string, slot: SlotState | null): Change => ({ type: "slot", owner, slot });
export const offer = (value: Offer): Change => ({ type: "offer", offer: value });
/** An offer kept in the session whose options are not shown here (an approval asked in direct chats). */
export const quietOffer = (value: Offer): Change => ({ type: "offer", offer: value, quiet: true });
export const toast = (text: string): Change => ({ type: "toast", text });
export const reset = (session: Session): Change => ({ type: "reset", session });

/**
 * A copy of a session that shares nothing it or its callers replace or assign to: the
 * lists, and the offers and slots in them (a sent offer's message refs are set on the
 * copy). Their own fields (options, args, approvals) are only ever replaced whole, so
 * they are shared; a structuredClone per turn cost more than the rest of this function.
 */
function copyOf(s: Readonly<Session>): Session {
  return {
    ...s,
    enabled: [...s.enabled],
    offers: s.offers.map((o) => ({ ...o })),
    slots: s.slots.map((slot) => ({ ...slot })),
    taken: [...s.taken],
  };
}

/** The session after a list of changes, as a new object (the one given is left as it was). */
export function applyToSession(start: Readonly<Session>, changes: readonly Change[]): Session {
  let s = copyOf(start);
  for (const c of changes) {
    switch (c.type) {
      case "enable":
        s.enabled = [...new Set([...s.enabled, ...c.tools])];
        break;
      case "slot":
        s.slots = [
          ...s.slots.filter((old) => old.askedOf !== undefined && old.askedOf.id !== c.owner),
          ...(c.slot ? [c.slot] : []),
        ];
        break;
      case "offer":
        s.offers = [...s.offers.filter((o) => o.expiresAt > c.offer.createdAt), c.offer].slice(-MAX_OFFERS);
        break;
      case "approve":
        s.offers = s.offers.map((o) =>
          o.id === c.offerId && o.approval
            ? { ...o, approval: { ...o.approval, approvedBy: [...o.approval.approvedBy, c.by] } }
            : o,
        );
        break;
      case "chosen":
        s.offers = s.offers.map((o) =>
          o.id === c.offerId ? { ...o, chosen: { token: c.token, label: c.label, at: c.at } } : o,
        );
        break;
      case "reset":
        s = copyOf(c.session);
        break;
      case "take":
        s.taken = [...s.taken, ...c.eventIds].slice(-MAX_TAKEN);
        break;
      case "untake":
        s.taken = s.taken.filter((id) => id !== c.eventId);
        break;
      default:
        break;
    }
  }
  return s;
}

/** What a finished turn changes: the outcome to deliver and the session state to commit. */
export interface TurnResult {
  outcome: TurnOutcome;
  session: Session;
  append: HistoryEntry[];
  resetHistory: boolean;
}

/**
 * Applies a turn's changes, the one place they take effect: the new session (one more
 * turn), the history to append, and the outcome. A turn that said nothing delivers no
 * reply; the reply's options are those of the last offer made.
 */
export function applyChanges(
  start: Readonly<Session>,
  changes: readonly Change[],
  now = Date.now(),
): TurnResult {
  const session = applyToSession(start, changes);
  session.updatedAt = now;
  session.turns += 1;
  const blocks: Block[] = [];
  const attachments: Attachment[] = [];
  const append: HistoryEntry[] = [];
  let replied = false;
  let resetHistory = false;
  let lastOffer: Offer | undefined;
  let toastText: string | undefined;
  let chosen: TurnOutcome["chosen"];
  let personal: Reply["personal"];
  for (const c of changes) {
    if (c.type === "say") {
      blocks.push(...c.blocks);
      replied = true;
    } else if (c.type === "attach") {
      attachments.push(...c.attachments);
      if (c.attachments.length > 0) replied = true;
    } else if (c.type === "remember") append.push(c.entry);
    else if (c.type === "offer" && !c.quiet) lastOffer = c.offer;
    else if (c.type === "toast") toastText = c.text;
    else if (c.type === "chosen") chosen = { offerId: c.offerId, label: c.label, messageRefs: c.messageRefs };
    else if (c.type === "reset") resetHistory = true;
    else if (c.type === "personal")
      personal = { to: c.to, ...(c.note === undefined ? {} : { note: c.note }) };
  }
  const reply = replied
    ? {
        blocks,
        options: lastOffer?.options.map(({ token, label }) => ({ token, label })) ?? [],
        ...(lastOffer ? { offerId: lastOffer.id } : {}),
        ...(attachments.length > 0 ? { attachments } : {}),
        ...(personal ? { personal } : {}),
      }
    : null;
  return {
    outcome: {
      reply,
      ...(toastText !== undefined ? { toast: toastText } : {}),
      ...(chosen ? { chosen } : {}),
    },
    session,
    append,
    resetHistory,
  };
}
