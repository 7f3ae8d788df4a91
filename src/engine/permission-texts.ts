import type { CommandRole } from "./access.js";

/** The bot's own lines about who may do what (pending state, roles, approvals), apart from log text. */
export const permissionTexts = {
  askedOf: (name: string) => `This was asked of ${name}.`,
  notInRole: (command: string, role: CommandRole) =>
    role === "caller"
      ? `Only this room's callers may use /${command} here. Ask your question without it, or ask the operator.`
      : role === "approver"
        ? `Only this room's approvers may change /${command} here.`
        : `Only this room's users may use /${command} here.`,
  notScheduleOwner: (n: number) =>
    `Schedule #${n} can be removed only by whoever added it or by this room's approvers. Nothing was removed.`,
  approvalBy: (needed: number) =>
    needed === 1
      ? "One of this room's approvers must approve it (y / n); nothing runs until then."
      : `${needed} of this room's approvers must approve it (y / n); nothing runs until then.`,
  approvalInDms: (needed: number) =>
    `${needed === 1 ? "One approver" : `${needed} approvers`} must approve it; they were asked in their direct chats with the bot. Nothing runs until then.`,
  notApprover: "Only this room's approvers may approve this call.",
  waitingFor: (name: string) => `Waiting for an approval from ${name}.`,
  answeringFor: (name: string) => `Waiting for ${name} to answer a question (shown to them).`,
  usersOnly: "Only this room's users may choose here.",
  ownApproval:
    "You asked for this call, so your own approval does not count: another of this room's approvers must approve it.",
  cannotBeApproved: (tool: string, needed: number, others: number) =>
    `${tool} needs ${needed === 1 ? "an approval" : `${needed} approvals`} from this room's approvers other than the person who asked, ` +
    `and ${others === 0 ? "there is none" : `there ${others === 1 ? "is only one" : `are only ${others}`}`}, so nobody can approve it here. ` +
    "Nothing was run; the operator can change the room's approvers.",
  notYours: (name: string) => `Only ${name}, who asked, can decide this.`,
  approvedOne: (name: string, have: number, needed: number, tool: string) =>
    `Approved by ${name} (${have} of ${needed}); ${tool} waits for ${needed - have === 1 ? "one more approval" : `${needed - have} more approvals`}.`,
  approvedAgain: (have: number, needed: number) =>
    `You approved this already (${have} of ${needed}); it needs another approver.`,
  deniedBy: (tool: string, name: string) => `Denied by ${name}: ${tool} was not run.`,
  requesterGone: (name: string, tool: string) =>
    `${name}, who asked for ${tool}, is no longer allowed here, so it was not run.`,
  askedInDm: (requester: string, room: string) =>
    `${requester} asked for this call in ${room}; you are one of its approvers. Approve or deny it here.`,
  passedOn: "Passed on to the room the call was asked in.",
  dmFailed:
    "The approvers could not all be asked in their direct chats (a direct chat with the bot must be started first); approve it here instead (y / n).",
} as const;
