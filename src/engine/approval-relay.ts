import { asSender, directChatOf } from "../core/direct-chat.js";
import type { InboundEvent } from "../core/event.js";
import type { Offer, OfferOption } from "../sessions/session.js";
import { nameOf, personOf } from "./access.js";
import { APPROVE, DENY, usedUp } from "./approvals.js";
import { offer, say, show, type Change } from "./changes.js";
import { newOffer } from "./offers.js";
import { permissionTexts } from "./permission-texts.js";
import type { TurnContext } from "./turn-context.js";

/**
 * The event that asks one approver in their direct chat with the bot about a call held
 * in this turn's room (`approvals.where: dm`); undefined when the platform has no
 * direct chat for them. Its id is fixed per held call and approver, so a turn retried
 * after a crash asks once.
 */
export function relayedApproval(
  event: InboundEvent,
  held: Offer,
  approverId: string,
): InboundEvent | undefined {
  const dm = directChatOf(event.origin, approverId);
  const back = asSender(event.origin, approverId);
  const approval = held.approval;
  if (!dm || !back || !approval) return undefined;
  const tokenOf = (option: string) => held.options.find((o) => o.option === option)!.token;
  return {
    eventId: `approval:${held.id}:${approverId}`,
    kind: "approval",
    namespace: event.namespace,
    platform: event.platform,
    receivedAt: Date.now(),
    room: dm.room,
    sender: { id: approverId, allowed: true },
    addressed: "direct",
    origin: dm.origin,
    approval: {
      room: event.room,
      offerId: held.id,
      tokens: [tokenOf(APPROVE), tokenOf(DENY)],
      tool: approval.tool,
      args: approval.args,
      question: approval.question,
      requester: approval.requester ?? personOf(event),
      needed: approval.needed,
      expiresAt: held.expiresAt,
      origin: back,
    },
  };
}

/** In the approver's direct chat: the held call, its arguments and Approve / Deny, which go back to its room. */
export function askRelayed(ctx: TurnContext, event: Extract<InboundEvent, { kind: "approval" }>): Change[] {
  const a = event.approval;
  const seconds = Math.max(1, Math.round((a.expiresAt - Date.now()) / 1000));
  const asked = newOffer(a.question, [APPROVE, DENY], [], seconds, {
    askedOf: personOf(event),
    forward: { room: a.room, tokens: a.tokens, origin: a.origin, namespace: event.namespace },
  });
  return [
    say(permissionTexts.askedInDm(nameOf(a.requester), a.room)),
    say(`${a.tool}:`),
    show([{ type: "code", text: JSON.stringify(a.args, null, 2) }]),
    offer(asked),
  ];
}

/** An option chosen in a direct chat presses the same option of the held call in its room, as this approver. */
export async function passBack(ctx: TurnContext, asked: Offer, option: OfferOption): Promise<Change[]> {
  const forward = asked.forward!;
  const index = asked.options.findIndex((o) => o.token === option.token);
  await ctx.access.relay({
    eventId: `decision:${ctx.event.eventId}`,
    kind: "choice",
    token: forward.tokens[index]!,
    namespace: forward.namespace,
    platform: ctx.event.platform,
    receivedAt: Date.now(),
    room: forward.room,
    sender: { ...ctx.event.sender, allowed: true },
    addressed: "button",
    origin: forward.origin as InboundEvent["origin"],
  });
  return usedUp(asked, option, permissionTexts.passedOn);
}
