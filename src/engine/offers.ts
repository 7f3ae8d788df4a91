import { randomBytes } from "node:crypto";
import { optionToken } from "../core/option-token.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import type { Offer, OfferOption, Session } from "../sessions/session.js";

/** A fresh opaque token: 12 url-safe characters, far under Telegram's 64-byte callback_data. */
export function newToken(): string {
  return randomBytes(9).toString("base64url");
}

/** An option's label: the option verbatim, or the tool's title with the option in parentheses (DESIGN §3.4). */
export function optionLabel(option: string, tools: readonly ToolInfo[]): string {
  const tool = tools.find((t) => t.name === option);
  return tool?.title ? `${tool.title} (${option})` : option;
}

/**
 * A new offer of options (an Answer's, an approval's, candidates'), pending until one is
 * chosen or it expires; `extra` says what choosing does beyond the option itself.
 */
export function newOffer(
  question: string,
  options: string[],
  tools: readonly ToolInfo[],
  ttlSeconds: number,
  extra: Pick<Offer, "callWith" | "approval" | "askedOf" | "forward"> = {},
  now = Date.now(),
): Offer {
  const id = newToken();
  return {
    id,
    question,
    options: options.map((option, i) => ({
      token: optionToken(id, i + 1),
      option,
      label: optionLabel(option, tools),
    })),
    createdAt: now,
    expiresAt: now + ttlSeconds * 1000,
    messageRefs: [],
    ...extra,
  };
}

/** Why a choice cannot be taken, in words for the person. */
export type ChoiceProblem = "unknown" | "expired" | "used";

/** Finds the offer and option a token names, or says why it cannot be chosen. */
export function findByToken(
  session: Readonly<Session>,
  token: string,
  now = Date.now(),
): { offer: Offer; option: OfferOption } | { problem: ChoiceProblem } {
  for (const offer of session.offers) {
    const option = offer.options.find((o) => o.token === token);
    if (!option) continue;
    if (offer.chosen) return { problem: "used" };
    if (offer.expiresAt <= now) return { problem: "expired" };
    return { offer, option };
  }
  return { problem: "unknown" };
}

/**
 * The offer a typed reply chooses from: the one whose message the person replied to when
 * that is known and still open, else the newest offer still open.
 */
export function openOffer(
  session: Readonly<Session>,
  repliedOfferId?: string | null,
  now = Date.now(),
  answerable: (offer: Offer) => boolean = () => true,
): Offer | undefined {
  const isOpen = (o: Offer | undefined): o is Offer => o !== undefined && !o.chosen && o.expiresAt > now;
  const replied = repliedOfferId ? session.offers.find((o) => o.id === repliedOfferId) : undefined;
  if (replied) return isOpen(replied) && answerable(replied) ? replied : undefined;
  // The newest offer this person may answer: another member's newer offer does not hide theirs.
  const last = session.offers.filter(answerable).at(-1);
  return isOpen(last) ? last : undefined;
}

/** Whether a reply is a bare number (of any length), which is always taken as a choice. */
export function isOptionNumber(text: string): boolean {
  return /^\d+$/.test(text.trim());
}

/** The option a typed reply picks from an open offer: its number (any digits), its exact text or its label. */
export function optionFromText(offer: Offer, text: string): OfferOption | undefined {
  const t = text.trim();
  if (isOptionNumber(t)) {
    const n = Number(t);
    return Number.isSafeInteger(n) && n >= 1 ? offer.options[n - 1] : undefined;
  }
  return offer.options.find((o) => o.option === t || o.label === t || o.option === text);
}
