import type { Binding } from "./bindings.js";

/** Whether `/pair` added a sender to a binding, by the binding's name. */
export type PairedCheck = (binding: string, senderId: string) => boolean;

/** What is known about the sender besides their id: who pairing added, and their power level in the room (Matrix). */
export interface SenderFacts {
  paired?: PairedCheck | undefined;
  /** The sender's power level in the room, when the binding admits by level and the room's levels are known. */
  level?: number | undefined;
}

/**
 * Deny by default (DESIGN §9): may the sender ask in a room of this binding — listed,
 * added by pairing, at or above the binding's power level, or anyone in a terminal room
 * without a list. No binding: nobody.
 */
export function mayAsk(binding: Binding | undefined, senderId: string, facts: SenderFacts = {}): boolean {
  if (!binding) return false;
  if (binding.users === "anyone" || binding.users.has(senderId)) return true;
  if (facts.paired?.(binding.name, senderId)) return true;
  return binding.powerLevel !== undefined && facts.level !== undefined && facts.level >= binding.powerLevel;
}

/** May the sender press a button here: anyone who may ask, and the approvers whose approvals are asked here. */
export function mayPress(binding: Binding | undefined, senderId: string, facts: SenderFacts = {}): boolean {
  return mayAsk(binding, senderId, facts) || (binding?.pressers?.has(senderId) ?? false);
}

/** May the sender use /call and /tools: the binding's `callers`, or anyone who may ask when it names none. */
export function mayCall(binding: Binding | undefined, senderId: string, facts: SenderFacts = {}): boolean {
  const callers = binding?.callers;
  return callers === undefined ? mayAsk(binding, senderId, facts) : callers.has(senderId);
}

/** Is the sender one of the binding's `approvers`. */
export function isApprover(binding: Binding | undefined, senderId: string): boolean {
  return binding?.approvers?.has(senderId) ?? false;
}

/**
 * May the sender change what the whole room gets (a /mute, removing a schedule): the
 * binding's approvers, or anyone who may ask when it names none.
 */
export function mayGovern(binding: Binding | undefined, senderId: string, facts: SenderFacts = {}): boolean {
  return binding?.approvers ? isApprover(binding, senderId) : mayAsk(binding, senderId, facts);
}

/**
 * Who may run a command in a room (DESIGN §9): any of its `users`, its `callers`
 * (tools past the router), or those who govern it: its `approvers`, or any user
 * when the binding names none.
 */
export type CommandRole = "user" | "caller" | "approver";

/** Whether the sender has a command's role under the binding. */
export function hasRole(
  binding: Binding | undefined,
  role: CommandRole,
  senderId: string,
  facts: SenderFacts = {},
): boolean {
  switch (role) {
    case "user":
      return mayAsk(binding, senderId, facts);
    case "caller":
      return mayCall(binding, senderId, facts);
    case "approver":
      return mayGovern(binding, senderId, facts);
  }
}

/** May the user invite the bot into the binding's room (Matrix invites). No binding: nobody. */
export function mayInvite(binding: Binding | undefined, inviter: string): boolean {
  return binding?.inviters?.has(inviter) ?? false;
}
