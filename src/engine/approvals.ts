import type { ApprovalRule } from "../access/bindings.js";
import { matchesAny } from "../namespace/tool-filter.js";
import type { ToolInfo } from "../namespace/tool-info.js";
import { isDestructive } from "../namespace/tool-info.js";
import { argumentsHash, callArguments, type AuditEntry } from "../sessions/audit-log.js";
import type { Approval, Offer, OfferOption } from "../sessions/session.js";
import { askedOfSender, isUser, nameOf, personOf, toThemAlone } from "./access.js";
import { offer, quietOffer, say, show, type Change } from "./changes.js";
import { namespaceTexts } from "./namespace-texts.js";
import { newOffer } from "./offers.js";
import { relayedApproval } from "./approval-relay.js";
import { permissionTexts } from "./permission-texts.js";
import type { TurnContext } from "./turn-context.js";

/** The two options of an approval, in the order they are numbered. */
export const APPROVE = "Approve";
export const DENY = "Deny";

/** How long a held call waits for its approvals unless configured. */
const DEFAULT_APPROVAL_SECONDS = 3600;

/**
 * How a tool's call is approved in this room: the binding's rule when it covers the
 * tool (no `tools` list: every tool that needs approval), else one approval by the
 * approvers when the binding names some, else by the requester.
 */
export function approvalRule(ctx: TurnContext, tool: string): ApprovalRule {
  const binding = ctx.access.binding;
  if (!binding) return { by: "requester", count: 1, where: "room" };
  const rule = binding.approvals;
  if (!rule.tools || matchesAny(tool, rule.tools)) return rule;
  return { by: binding.approvers ? "approvers" : "requester", count: 1, where: rule.where };
}

/**
 * True when a call must wait for approval: the binding's `approvals.tools` lists it, or
 * MCP marks the tool destructive (or the namespace lists it under `tools.confirm`) and
 * the namespace does not trust it. The router never asks.
 */
export function needsApproval(ctx: TurnContext, tool: ToolInfo): boolean {
  const ns = ctx.namespace;
  if (tool.name === ns.askTool) return false;
  const listed = ctx.access.binding?.approvals.tools;
  if (listed && matchesAny(tool.name, listed)) return true;
  if (ns.isTrusted(tool.name)) return false;
  return isDestructive(tool) || ns.mustConfirm(tool.name);
}

/** What the trail says about a held call, whatever happens to it. */
export function approvalEntry(
  ctx: TurnContext,
  approval: Approval,
  type: AuditEntry["type"],
  extra: Partial<AuditEntry> = {},
): AuditEntry {
  return {
    type,
    at: Date.now(),
    binding: ctx.access.binding?.name ?? ctx.event.room,
    room: ctx.event.room,
    ...(approval.requester ? { requester: approval.requester.id } : {}),
    tool: approval.tool,
    ...callArguments(approval.args, ctx.access.binding?.auditArguments ?? true),
    needed: approval.needed,
    ...extra,
  };
}

/**
 * Holds a destructive call: shows the tool and its arguments with Approve / Deny.
 * The approval is an offer asked of the requester (and open to the approvers when
 * they decide), so it is single-use, bound to this room's session and expires; the
 * trail records the request now, and its expiry if nobody decides.
 */
export async function askApproval(
  ctx: TurnContext,
  tool: ToolInfo,
  args: Record<string, unknown>,
  question: string,
): Promise<Change[]> {
  const label = tool.title ? `${tool.title} (${tool.name})` : tool.name;
  const rule = approvalRule(ctx, tool.name);
  const requester = personOf(ctx.event);
  const approval: Approval = {
    tool: tool.name,
    args,
    question,
    requester,
    by: rule.by,
    needed: rule.count,
    approvedBy: [],
    where: rule.where,
    argumentsHash: argumentsHash(args),
  };
  if (rule.by === "approvers") {
    // The requester never counts towards their own call: too few others, and nobody can approve it.
    const others = eligibleApprovers(ctx, requester.id).length;
    if (others < rule.count) return [say(permissionTexts.cannotBeApproved(label, rule.count, others))];
  }
  const seconds = ctx.settings.approvalSeconds ?? DEFAULT_APPROVAL_SECONDS;
  const held = newOffer(question, [APPROVE, DENY], [], seconds, { approval, askedOf: requester });
  await ctx.access.opened(
    held.id,
    approvalEntry(ctx, approval, "approval.requested", { approval: held.id, by: requester.id }),
    approvalEntry(ctx, approval, "approval.expired", { approval: held.id, at: held.expiresAt }),
    held.expiresAt,
  );
  const ask = [
    say(
      isDestructive(tool)
        ? namespaceTexts.approvalAsk(ctx.namespace.name, label)
        : namespaceTexts.confirmAsk(ctx.namespace.name, label),
    ),
    show([{ type: "code", text: JSON.stringify(args, null, 2) }]),
  ];
  if (rule.by === "requester") {
    // Theirs to decide: in a group, they alone see the call; the room sees that it waits.
    const alone = toThemAlone(ctx.access, requester, permissionTexts.waitingFor(nameOf(requester)));
    return [...ask, say(namespaceTexts.approvalHow), offer(held), ...alone];
  }
  const relayed = rule.where === "dm" ? await relayToApprovers(ctx, held) : false;
  if (relayed) return [...ask, say(permissionTexts.approvalInDms(rule.count)), quietOffer(held)];
  return [
    ...ask,
    say(rule.where === "dm" ? permissionTexts.dmFailed : permissionTexts.approvalBy(rule.count)),
    offer(held),
  ];
}

/**
 * May `senderId` approve this held call, as the bindings say now: the requester when it
 * is theirs to confirm (one asked by no person: any of the room's users), else one of
 * the binding's current approvers other than the requester, who never counts towards
 * their own call.
 */
export function mayApprove(ctx: TurnContext, approval: Approval, senderId: string): boolean {
  if (approval.by === "requester") {
    return approval.requester ? askedOfSender(approval.requester, senderId) : isUser(ctx.access, senderId);
  }
  return eligibleApprovers(ctx, approval.requester?.id).includes(senderId);
}

/** The binding's approvers who may approve a call `requesterId` asked for: all but the requester. */
export function eligibleApprovers(ctx: TurnContext, requesterId: string | undefined): string[] {
  return [...(ctx.access.binding?.approvers ?? [])].filter((id) => id !== requesterId);
}

/** May `senderId` answer this offer at all: the person it was asked of, or an approver of a held call. */
export function mayAnswer(ctx: TurnContext, held: Offer, senderId: string): boolean {
  if (held.approval && mayApprove(ctx, held.approval, senderId)) return true;
  return askedOfSender(held.askedOf, senderId);
}

/** The option a typed y/yes or n/no picks from an approval offer. */
export function approvalFromText(held: Offer, text: string): OfferOption | undefined {
  if (!held.approval) return undefined;
  const t = text.trim().toLowerCase();
  const wanted = ["y", "yes"].includes(t) ? APPROVE : ["n", "no"].includes(t) ? DENY : undefined;
  return held.options.find((o) => o.option === wanted);
}

/** Relays the approval to each approver's direct chat; false when the platform has none for them. */
async function relayToApprovers(ctx: TurnContext, held: Offer): Promise<boolean> {
  const approvers = eligibleApprovers(ctx, held.approval?.requester?.id);
  const events = approvers.map((id) => relayedApproval(ctx.event, held, id));
  if (approvers.length === 0 || events.some((e) => e === undefined)) return false;
  for (const event of events) await ctx.access.relay(event!);
  return true;
}

/** The changes that use an offer up (its message marked, the press answered). */
export function usedUp(held: Offer, option: OfferOption, toastText: string): Change[] {
  return [
    {
      type: "chosen",
      offerId: held.id,
      token: option.token,
      label: option.label,
      at: Date.now(),
      messageRefs: held.messageRefs,
    },
    { type: "toast", text: toastText },
  ];
}

export { nameOf };
