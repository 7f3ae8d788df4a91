import { askedOfSender, isUser, nameOf } from "../access.js";
import { toast, type Change } from "../changes.js";
import { on } from "../composer.js";
import { findByToken } from "../offers.js";
import { permissionTexts } from "../permission-texts.js";
import { texts } from "../texts.js";
import type { TurnContext } from "../turn-context.js";
import type { Offer, OfferOption } from "../../sessions/session.js";
import { choose } from "./choose.js";

/**
 * A valid press or keycap, by whoever sent it: only the person an offer was asked of
 * may take it, and an offer asked of nobody in particular (a scheduled or webhook
 * post's options) only the room's users, not an approver who may press approvals
 * there; a held call's approvers are checked where it is decided.
 */
function take(ctx: TurnContext, offer: Offer, option: OfferOption): Promise<Change[]> | Change[] {
  const sender = ctx.event.sender.id;
  if (!offer.approval && offer.askedOf && !askedOfSender(offer.askedOf, sender)) {
    return [toast(permissionTexts.askedOf(nameOf(offer.askedOf)))];
  }
  if (!offer.approval && !offer.askedOf && !isUser(ctx.access, sender)) {
    return [toast(permissionTexts.usersOnly)];
  }
  return choose(ctx, offer, option);
}

/** A button press names its option by token; a stale, used or forged one only gets a toast. */
export const buttonPress = on("choice", (ctx, event) => {
  const found = findByToken(ctx.session, event.token);
  if ("problem" in found) return [toast(texts.choice[found.problem])];
  return take(ctx, found.offer, found.option);
});

/** A keycap reaction names its option by number on the offer's message; one on no offer does nothing. */
export const keycapReaction = on("reaction", async (ctx, event) => {
  const offerId = await ctx.offerByRef(event.messageRef);
  const offer = ctx.session.offers.find((o) => o.id === offerId);
  const option = offer?.options[event.number - 1];
  if (!offer || !option) return [];
  const found = findByToken(ctx.session, option.token);
  if ("problem" in found) return [toast(texts.choice[found.problem])];
  return take(ctx, found.offer, found.option);
});
