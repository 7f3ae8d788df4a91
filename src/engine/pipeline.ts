import type { InboundEvent } from "../core/event.js";
import { chain, on, when, type Step } from "./composer.js";
import { approvalAsked } from "./steps/approval-asked.js";
import { buttonPress, keycapReaction } from "./steps/choice.js";
import { commands } from "./steps/commands.js";
import { edgeRecheck } from "./steps/edge-recheck.js";
import { fileAnswer } from "./steps/file-answer.js";
import { fileToTool } from "./steps/file-to-tool.js";
import { voiceNote } from "./steps/voice-note.js";
import { messageSize } from "./steps/message-size.js";
import { offerAnswer } from "./steps/offer-answer.js";
import { proactive } from "./steps/proactive.js";
import { remembered } from "./steps/remembered.js";
import { router } from "./steps/router.js";
import { slotAnswer, slotExpiry } from "./steps/slot.js";
import { stopped } from "./steps/stopped.js";
import { alreadyTaken } from "./steps/taken.js";

/**
 * The turn, as steps. Each step is one file under ./steps: it reads the immutable
 * turn context (the event and its edge record, the session as the steps before it
 * left it) and returns the changes that handle the turn, or passes. The first step
 * that handles the event ends the turn; `applyChanges` (changes.ts) is the one place
 * the changes take effect. A new step is one file and one line below.
 */

/**
 * Before a queued event becomes a turn, with no session state read yet: a refusal
 * here drops the event without a trace (DESIGN §9, deny by default).
 */
export const admission: readonly ((
  event: InboundEvent,
  senderAllowed: ((event: InboundEvent) => boolean) | undefined,
) => boolean)[] = [edgeRecheck];

/** A typed message, or an option handled as if it were typed (DESIGN §4). */
export const messageSteps: Step = chain(
  messageSize, // too long: refused; blank: nothing
  commands, // /help, /tools, /call, /schedule, /mute, …: one file each under ./commands
  remembered, // into the history, and on
  slotExpiry, // a slot that waited too long ends, and on
  slotAnswer, // the pending argument a tool waits for
  offerAnswer, // a pending offer's number, text or label; y/n for an approval
  router, // everything else: the namespace's router, or matching tools offered
);

/** One turn. */
export const turnSteps: Step = chain(
  alreadyTaken, // an answer, /cancel or Stop a running call took: nothing more
  stopped, // a Stop no running call took: nothing
  approvalAsked, // a call held in another room, asked of this approver
  on("proactive", proactive), // a schedule's fire, a webhook, a resource update: no person
  buttonPress, // a pending choice by token
  keycapReaction, // a pending choice by keycap on its message
  voiceNote, // a voice note, turned into text by the room's voice tool, for the router
  fileToTool, // a photo, voice note or file for the tool that takes it
  fileAnswer, // a text file for the pending argument
  when((ctx) => ctx.message !== undefined, messageSteps),
);
