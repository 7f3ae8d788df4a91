import { randomBytes } from "node:crypto";
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
  const offerOptions: OfferOption[] = options.map((option) => ({
    token: newToken(),
    option,
    label: optionLabel(option, tools),
  }));
  const offer: Offer = {
    id: newToken(),
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

/** The newest offer still open, which a reply of a number or an option's text chooses from. */
export function openOffer(session: Session, now = Date.now()): Offer | undefined {
  const last = session.offers.at(-1);
  return last && !last.chosen && last.expiresAt > now ? last : undefined;
}

/** The option a typed reply picks from an open offer: its number, its exact text or its label. */
export function optionFromText(offer: Offer, text: string): OfferOption | undefined {
  const t = text.trim();
  if (/^\d{1,3}$/.test(t)) return offer.options[Number(t) - 1];
  return offer.options.find((o) => o.option === t || o.label === t);
}
