import { offer, say, type Change } from "./changes.js";
import { namespaceTexts } from "./namespace-texts.js";
import { newOffer } from "./offers.js";
import { searchTools } from "./tool-search.js";
import type { TurnContext } from "./turn-context.js";
import { asked } from "./access.js";

/**
 * A plain message in a namespace without a router (`ask: false`, or none listed):
 * the tools that best match its words, as the same search as `/tools words` finds
 * them, become options; choosing one enables and runs it with the message.
 */
export async function suggestTools(ctx: TurnContext, text: string): Promise<Change[]> {
  const ns = ctx.namespace;
  const tools = await ns.tools();
  const matches = searchTools(tools, text);
  if (matches.length === 0) return [say(namespaceTexts.noRouterNothing(ns.name))];
  const names = matches.map((t) => t.name);
  return [
    say(namespaceTexts.noRouterMatches(ns.name)),
    offer(newOffer(text, names, tools, ctx.settings.choiceSeconds, asked(ctx.event))),
  ];
}
