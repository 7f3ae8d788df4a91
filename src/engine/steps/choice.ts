import { toast } from "../changes.js";
import { on } from "../composer.js";
import { findByToken } from "../offers.js";
import { texts } from "../texts.js";
import { choose } from "./choose.js";

/** A button press names its option by token; a stale, used or forged one only gets a toast. */
export const buttonPress = on("choice", (ctx, event) => {
  const found = findByToken(ctx.session, event.token);
  if ("problem" in found) return [toast(texts.choice[found.problem])];
  return choose(ctx, found.offer, found.option);
});

/** A keycap reaction names its option by number on the offer's message; one on no offer does nothing. */
export const keycapReaction = on("reaction", async (ctx, event) => {
  const offerId = await ctx.offerByRef(event.messageRef);
  const offer = ctx.session.offers.find((o) => o.id === offerId);
  const option = offer?.options[event.number - 1];
  if (!offer || !option) return [];
  const found = findByToken(ctx.session, option.token);
  if ("problem" in found) return [toast(texts.choice[found.problem])];
  return choose(ctx, found.offer, found.option);
});
