import type { Offer, OfferOption } from "../sessions/session.js";
import { isApprover, isUser, nameOf, personOf, toThemAlone } from "./access.js";
import { APPROVE, approvalEntry, mayApprove, usedUp } from "./approvals.js";
import { say, toast, type Change } from "./changes.js";
import { andThen } from "./composer.js";
import { namespaceTexts } from "./namespace-texts.js";
import { permissionTexts } from "./permission-texts.js";
import { texts } from "./texts.js";
import { callChecked } from "./tool-runner.js";
import type { TurnContext } from "./turn-context.js";

/**
 * A press (or y/n) on a held call, by whoever sent it, checked against the bindings as
 * they are now: Deny by the requester or an approver ends it; Approve counts once per
 * approver other than the requester (whose own never counts), and the call runs when
 * enough distinct people approved — still as the
 * requester's call, re-checked against the namespace's tools and the room's scope.
 * Every approval and denial goes to the trail; anyone else gets a short line and
 * changes nothing.
 */
export async function decideApproval(ctx: TurnContext, held: Offer, option: OfferOption): Promise<Change[]> {
  const approval = held.approval!;
  const who = personOf(ctx.event);
  const requester = approval.requester;
  const eligible = mayApprove(ctx, approval, who.id);
  const mayDeny = eligible || requester?.id === who.id;
  // A typed answer that does not count is told to its sender alone, a press in its toast.
  const refuse = (line: string): Change[] =>
    ctx.event.kind === "message" ? [say(line), ...toThemAlone(ctx.access, who)] : [toast(line)];
  if (option.option !== APPROVE) {
    if (!mayDeny) return refuse(deniedLine(approval.by, requester ? nameOf(requester) : undefined));
    await ctx.access.closed(held.id);
    await ctx.access.record(
      approvalEntry(ctx, approval, "approval.denied", { approval: held.id, by: who.id }),
    );
    return [
      ...usedUp(held, option, texts.chosen(option.label)),
      say(
        who.id === requester?.id
          ? namespaceTexts.denied(approval.tool)
          : permissionTexts.deniedBy(approval.tool, nameOf(who)),
      ),
    ];
  }
  if (!eligible) {
    // An approver who asked for the call is told why their press does not count.
    if (requester?.id === who.id && isApprover(ctx.access, who.id))
      return refuse(permissionTexts.ownApproval);
    return refuse(deniedLine(approval.by, requester ? nameOf(requester) : undefined));
  }
  if (approval.approvedBy.some((a) => a.id === who.id)) {
    return refuse(permissionTexts.approvedAgain(approval.approvedBy.length, approval.needed));
  }
  const vote = { ...who, at: Date.now() };
  const approvedBy = [...approval.approvedBy, vote];
  await ctx.access.record(
    approvalEntry(ctx, approval, "approval.granted", {
      approval: held.id,
      by: who.id,
      approvedBy: approvedBy.map((a) => a.id),
    }),
  );
  if (approvedBy.length < approval.needed) {
    const line = permissionTexts.approvedOne(nameOf(who), approvedBy.length, approval.needed, approval.tool);
    return [{ type: "approve", offerId: held.id, by: vote }, toast(line), say(line)];
  }
  await ctx.access.closed(held.id);
  const used = usedUp(held, option, texts.chosen(option.label));
  // Re-checked when it is used: the requester must still be one of the room's users.
  if (requester && !isUser(ctx.access, requester.id)) {
    return [...used, say(permissionTexts.requesterGone(nameOf(requester), approval.tool))];
  }
  const tool = (await ctx.namespace.tools()).find((t) => t.name === approval.tool);
  if (!tool) return [...used, say(namespaceTexts.approvedGone(approval.tool, ctx.namespace.name))];
  return andThen(ctx, used, (next) =>
    callChecked(next, tool, approval.args, approval.question, {
      id: held.id,
      approvedBy: approvedBy.map((a) => a.id),
      ...(requester ? { requester } : {}),
    }),
  );
}

function deniedLine(by: "requester" | "approvers", requester: string | undefined): string {
  if (by === "approvers") return permissionTexts.notApprover;
  return requester ? permissionTexts.askedOf(requester) : permissionTexts.notApprover;
}
