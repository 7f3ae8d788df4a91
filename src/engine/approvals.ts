import type { ToolInfo } from "../namespace/tool-info.js";
import { isDestructive } from "../namespace/tool-info.js";
import type { Offer, OfferOption } from "../sessions/session.js";
import { namespaceTexts } from "./namespace-texts.js";
import { addOffer } from "./offers.js";
import type { Turn } from "./turn.js";

/** The two options of an approval, in the order they are numbered. */
export const APPROVE = "Approve";
export const DENY = "Deny";

/**
 * True when a call must wait for an Approve press: MCP marks the tool destructive (or
 * the binding lists it under `tools.confirm`), the binding does not trust it, and it
 * is not the router.
 */
export function needsApproval(turn: Turn, tool: ToolInfo): boolean {
  const ns = turn.namespace;
  if (tool.name === ns.askTool || ns.isTrusted(tool.name)) return false;
  return isDestructive(tool) || ns.mustConfirm(tool.name);
}

/**
 * Holds a destructive call: shows the tool and its arguments with Approve / Deny
 * options. The approval is an offer, so it is single-use, bound to this room's
 * session and expires as offers do.
 */
export function askApproval(
  turn: Turn,
  tool: ToolInfo,
  args: Record<string, unknown>,
  question: string,
): void {
  const label = tool.title ? `${tool.title} (${tool.name})` : tool.name;
  turn.say(
    isDestructive(tool)
      ? namespaceTexts.approvalAsk(turn.namespace.name, label)
      : namespaceTexts.confirmAsk(turn.namespace.name, label),
  );
  turn.show([{ type: "code", text: JSON.stringify(args, null, 2) }]);
  turn.say(namespaceTexts.approvalHow);
  const { offer, replyOptions } = addOffer(
    turn.session,
    question,
    [APPROVE, DENY],
    [],
    turn.settings.choiceSeconds,
  );
  offer.approval = { tool: tool.name, args, question };
  turn.options = replyOptions;
  turn.offerId = offer.id;
}

/** The option a typed y/yes or n/no picks from an approval offer. */
export function approvalFromText(offer: Offer, text: string): OfferOption | undefined {
  if (!offer.approval) return undefined;
  const t = text.trim().toLowerCase();
  const wanted = ["y", "yes"].includes(t) ? APPROVE : ["n", "no"].includes(t) ? DENY : undefined;
  return offer.options.find((o) => o.option === wanted);
}

/**
 * Carries out a decision on an approval: Deny says so and runs nothing; Approve runs
 * the held call, re-checked against the namespace's current tools and the room's scope.
 */
export async function decideApproval(
  turn: Turn,
  approval: NonNullable<Offer["approval"]>,
  option: OfferOption,
  run: (tool: ToolInfo, args: Record<string, unknown>, question: string) => Promise<void>,
): Promise<void> {
  if (option.option !== APPROVE) {
    turn.say(namespaceTexts.denied(approval.tool));
    return;
  }
  const tool = (await turn.namespace.tools()).find((t) => t.name === approval.tool);
  if (!tool) {
    turn.say(namespaceTexts.approvedGone(approval.tool, turn.namespace.name));
    return;
  }
  await run(tool, approval.args, approval.question);
}
