import type { Binding } from "../access/bindings.js";
import { askerOf } from "../access/pending.js";
import * as rules from "../access/rules.js";
import type { InboundEvent } from "../core/event.js";
import type { AuditEntry } from "../sessions/audit-log.js";
import type { AskedOf } from "../sessions/session.js";
import type { Reply } from "../core/reply.js";
import type { Change } from "./changes.js";

/**
 * Who may do what in a turn's room, as the bindings say now (DESIGN §9): the binding,
 * whether any queued event is still admitted (for what a running call takes out of
 * band), who pairing added, and where approvals and the trail go.
 */
export interface TurnAccess {
  /** The binding of the turn's room; undefined when the turn runs without one (engine tests). */
  binding?: Binding;
  /** Whether an event may still count, checked against the current bindings, not its queued flag. */
  admits(event: InboundEvent): boolean;
  /** Whether `/pair` added a sender to a binding. */
  paired(binding: string, senderId: string): boolean;
  /** Appends to the audit trail (a no-op without one). */
  record(entry: AuditEntry): Promise<void>;
  /** Notes an approval that waits, so that its expiry is recorded if nothing decides it. */
  opened(id: string, requested: AuditEntry, expired: AuditEntry, expiresAt: number): Promise<void>;
  /** The approval was decided. */
  closed(id: string): Promise<void>;
  /** Queues an event into another room (an approval asked in a direct chat, a decision passed back). */
  relay(event: InboundEvent): Promise<void>;
}

/** Access for turns run without bindings (engine tests, benchmarks): everything allowed, nothing recorded. */
export const openAccess: TurnAccess = {
  admits: (event) => event.sender.allowed,
  paired: () => false,
  record: async () => undefined,
  opened: async () => undefined,
  closed: async () => undefined,
  relay: async () => undefined,
};

export { askedOfSender, askerOf, personOf } from "../access/pending.js";
export type { CommandRole } from "../access/rules.js";

/** The `askedOf` of pending state made in this turn, if it has a person. */
export function asked(event: InboundEvent): { askedOf?: AskedOf } {
  const of = askerOf(event);
  return of ? { askedOf: of } : {};
}

/** How a person is named in "this was asked of …": their name, else their id. */
export function nameOf(person: AskedOf): string {
  return person.name ?? person.id;
}

/*
 * Who may do what in the turn's room: the rules of src/access/rules.ts over the turn's
 * binding and the users pairing added. A turn run without a binding (engine tests,
 * benchmarks) is open to its sender.
 */

/** Whether a sender is among a binding's users: listed, paired, or anyone in a terminal room without a list. */
export function isUser(access: TurnAccess, senderId: string): boolean {
  return !access.binding || rules.mayAsk(access.binding, senderId, { paired: access.paired });
}

/** Whether a sender may use /call and /tools: the binding's `callers`, or any of its users when unset. */
export function mayCall(access: TurnAccess, senderId: string): boolean {
  return !access.binding || rules.mayCall(access.binding, senderId, { paired: access.paired });
}

/** Whether a sender is one of the binding's `approvers`. */
export function isApprover(access: TurnAccess, senderId: string): boolean {
  return rules.isApprover(access.binding, senderId);
}

/**
 * Whether a sender may change what the whole room gets (a /mute): the binding's
 * approvers, or any of its users when it names none.
 */
export function mayGovern(access: TurnAccess, senderId: string): boolean {
  return !access.binding || rules.mayGovern(access.binding, senderId, { paired: access.paired });
}

/** Whether a sender has a command's role in the turn's room. */
export function hasRole(access: TurnAccess, role: rules.CommandRole, senderId: string): boolean {
  return !access.binding || rules.hasRole(access.binding, role, senderId, { paired: access.paired });
}

/**
 * What is asked of one member goes to them alone in a room of several people, where the
 * platform can (DESIGN §9): the change that marks the turn's reply so, with the line the
 * room sees instead; nothing in a direct chat or for a turn no person started.
 */
export function toThemAlone(access: TurnAccess, person: AskedOf | undefined, note?: string): Change[] {
  const alone = aloneFor(access, person, note);
  return alone ? [{ type: "personal", ...alone }] : [];
}

/** A reply's `personal` mark for one member in a room of several people (see toThemAlone). */
export function aloneFor(
  access: TurnAccess,
  person: AskedOf | undefined,
  note?: string,
): Reply["personal"] | undefined {
  if (!person || !access.binding?.group) return undefined;
  return { to: person, ...(note === undefined ? {} : { note }) };
}
