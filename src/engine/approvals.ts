import type { ToolInfo } from "../namespace/tool-info.js";
import { isDestructive } from "../namespace/tool-info.js";
import type { Offer, OfferOption } from "../sessions/session.js";
import { offer, say, show, type Change } from "./changes.js";
import { namespaceTexts } from "./namespace-texts.js";
import { newOffer } from "./offers.js";
import type { TurnContext } from "./turn-context.js";

/** The two options of an approval, in the order they are numbered. */
export const APPROVE = "Approve";
export const DENY = "Deny";

/**
 * True when a call must wait for an Approve press: MCP marks the tool destructive (or
 * the binding lists it under `tools.confirm`), the binding does not trust it, and it
 * is not the router.
 */
export function needsApproval(ctx: TurnContext, tool: ToolInfo): boolean {
  const ns = ctx.namespace;
  if (tool.name === ns.askTool || ns.isTrusted(tool.name)) return false;
  return isDestructive(tool) || ns.mustConfirm(tool.name);
}

/**
 * Holds a destructive call: shows the tool and its arguments with Approve / Deny
 * options. The approval is an offer, so it is single-use, bound to this room's
 * session and expires as offers do.
 */
export function askApproval(
  ctx: TurnContext,
  tool: ToolInfo,
  args: Record<string, unknown>,
  question: string,
): Change[] {
  const label = tool.title ? `${tool.title} (${tool.name})` : tool.name;
  const approval = newOffer(question, [APPROVE, DENY], [], ctx.settings.choiceSeconds, {
    approval: { tool: tool.name, args, question },
  });
  return [
    say(
      isDestructive(tool)
        ? namespaceTexts.approvalAsk(ctx.namespace.name, label)
        : namespaceTexts.confirmAsk(ctx.namespace.name, label),
    ),
    show([{ type: "code", text: JSON.stringify(args, null, 2) }]),
    say(namespaceTexts.approvalHow),
    offer(approval),
  ];
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
  ctx: TurnContext,
  approval: NonNullable<Offer["approval"]>,
  option: OfferOption,
  run: (tool: ToolInfo, args: Record<string, unknown>, question: string) => Promise<Change[]>,
): Promise<Change[]> {
  if (option.option !== APPROVE) return [say(namespaceTexts.denied(approval.tool))];
  const tool = (await ctx.namespace.tools()).find((t) => t.name === approval.tool);
  if (!tool) return [say(namespaceTexts.approvedGone(approval.tool, ctx.namespace.name))];
  return run(tool, approval.args, approval.question);
}
