import type { Offer, OfferOption } from "../../sessions/session.js";
import { decideApproval } from "../approval-decision.js";
import { passBack } from "../approval-relay.js";
import { enable, toast, type Change } from "../changes.js";
import { andThen } from "../composer.js";
import { callByAddress } from "../discovery.js";
import { texts } from "../texts.js";
import { callChecked, runTool } from "../tool-runner.js";
import type { TurnContext } from "../turn-context.js";

/**
 * Takes a valid choice (DESIGN §4): the offer is used up and the press answered; a
 * candidate address is called, an approval decided, a tool option enabled and called
 * with the original question; any other option is handled as if the person typed it.
 */
export async function choose(ctx: TurnContext, offer: Offer, option: OfferOption): Promise<Change[]> {
  // A held call is decided by whoever may decide it, possibly over several presses.
  if (offer.approval) return decideApproval(ctx, offer, option);
  if (offer.forward) return passBack(ctx, offer, option);
  const chosen: Change[] = [
    {
      type: "chosen",
      offerId: offer.id,
      token: option.token,
      label: option.label,
      at: Date.now(),
      messageRefs: offer.messageRefs,
    },
    toast(texts.chosen(option.label)),
  ];
  return andThen(ctx, chosen, async (next) => {
    if (offer.callWith) {
      const args = offer.callWith;
      return (
        (await callByAddress(next, option.option, args, (tool, call, question) =>
          callChecked(next, tool, call, question),
        )) ?? []
      );
    }
    if (await next.namespace.has(option.option)) {
      return andThen(next, [enable([option.option])], (enabled) =>
        runTool(enabled, option.option, { question: offer.question }),
      );
    }
    return [...(await next.typed(option.option))];
  });
}
