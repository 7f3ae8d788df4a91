import { namespaceTexts } from "./namespace-texts.js";
import { addOffer } from "./offers.js";
import { searchTools } from "./tool-search.js";
import type { Turn } from "./turn.js";

/**
 * A plain message in a namespace without a router (`ask: false`, or none listed):
 * the tools that best match its words, as the same search as `/tools words` finds
 * them, become options; choosing one enables and runs it with the message.
 */
export async function suggestTools(turn: Turn, text: string): Promise<void> {
  const ns = turn.namespace;
  const tools = await ns.tools();
  const matches = searchTools(tools, text);
  if (matches.length === 0) {
    turn.say(namespaceTexts.noRouterNothing(ns.name));
    return;
  }
  turn.say(namespaceTexts.noRouterMatches(ns.name));
  const { offer, replyOptions } = addOffer(
    turn.session,
    text,
    matches.map((t) => t.name),
    tools,
    turn.settings.choiceSeconds,
  );
  turn.options = replyOptions;
  turn.offerId = offer.id;
}
