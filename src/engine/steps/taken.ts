import { pass, type Step } from "../composer.js";

/**
 * An event a running turn already took out of band (an elicitation's answer, a
 * /cancel) has been handled: its own turn only drops the mark.
 */
export const alreadyTaken: Step = (ctx) =>
  ctx.session.taken.includes(ctx.event.eventId) ? [{ type: "untake", eventId: ctx.event.eventId }] : pass();
