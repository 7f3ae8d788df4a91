import { remember } from "../changes.js";
import { pass, type Step } from "../composer.js";

/** What the person said goes into the history (for `context`/`history` arguments), and the turn goes on. */
export const remembered: Step = (ctx) => pass([remember("user", ctx.message!.text)]);
