import { approvalFromText, mayAnswer } from "../approvals.js";
import { say } from "../changes.js";
import { pass, type Step } from "../composer.js";
import { isOptionNumber, openOffer, optionFromText } from "../offers.js";
import { texts } from "../texts.js";
import { choose } from "./choose.js";

/**
 * A typed answer to a pending offer: its number, its text or its label (or y/n for an
 * approval) chooses from the offer replied to, else the newest open one. A reply to an
 * offer that is used up or expired gets no other offer's option.
 */
export const offerAnswer: Step = async (ctx) => {
  const { text, fromOption } = ctx.message!;
  if (fromOption) return pass();
  const trimmed = text.trim();
  const replyTo = ctx.event.replyTo;
  const replied = replyTo ? await ctx.offerByRef(replyTo) : null;
  // Only offers this person may answer: another member's pending offer does not take their message.
  const offer = openOffer(ctx.session, replied, Date.now(), (o) => mayAnswer(ctx, o, ctx.event.sender.id));
  const closed = offer ? undefined : ctx.session.offers.find((o) => o.id === replied);
  if (closed && (isOptionNumber(trimmed) || optionFromText(closed, text))) {
    return [say(texts.choice[closed.chosen ? "used" : "expired"])];
  }
  if (!offer) return pass();
  const option = optionFromText(offer, text) ?? approvalFromText(offer, text);
  if (option) return choose(ctx, offer, option);
  if (isOptionNumber(trimmed)) return [say(texts.numberOutOfRange(trimmed, offer.options.length))];
  return pass();
};
