import { randomBytes } from "node:crypto";
import { optionToken } from "../core/option-token.js";
import type { ReplyOption } from "../core/reply.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import type { Offer, OfferOption, Session } from "../sessions/session.js";

/** How many offers a session keeps at most; older ones are dropped first. */
const MAX_OFFERS = 10;

/** A fresh opaque token: 12 url-safe characters, far under Telegram's 64-byte callback_data. */
export function newToken(): string {
  return randomBytes(9).toString("base64url");
}

/** An option's label: the option verbatim, or the tool's title with the option in parentheses (DESIGN §3.4). */
export function optionLabel(option: string, tools: ToolInfo[]): string {
  const tool = tools.find((t) => t.name === option);
  return tool?.title ? `${tool.title} (${option})` : option;
}

/** Creates an offer for the options of an Answer and adds it to the session. */
export function addOffer(
  session: Session,
  question: string,
  options: string[],
  tools: ToolInfo[],
  ttlSeconds: number,
  now = Date.now(),
): { offer: Offer; replyOptions: ReplyOption[] } {
  const id = newToken();
  const offerOptions: OfferOption[] = options.map((option, i) => ({
    token: optionToken(id, i + 1),
    option,
    label: optionLabel(option, tools),
  }));
  const offer: Offer = {
    id,
    question,
    options: offerOptions,
    createdAt: now,
    expiresAt: now + ttlSeconds * 1000,
    messageRefs: [],
  };
  session.offers = [...session.offers.filter((o) => o.expiresAt > now), offer].slice(-MAX_OFFERS);
  return { offer, replyOptions: offerOptions.map(({ token, label }) => ({ token, label })) };
}

/** Why a choice cannot be taken, in words for the person. */
export type ChoiceProblem = "unknown" | "expired" | "used";

/** Finds the offer and option a token names, or says why it cannot be chosen. */
export function findByToken(
  session: Session,
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
  session: Session,
  repliedOfferId?: string | null,
  now = Date.now(),
): Offer | undefined {
  const isOpen = (o: Offer | undefined): o is Offer => o !== undefined && !o.chosen && o.expiresAt > now;
  const replied = repliedOfferId ? session.offers.find((o) => o.id === repliedOfferId) : undefined;
  if (replied) return isOpen(replied) ? replied : undefined;
  const last = session.offers.at(-1);
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
