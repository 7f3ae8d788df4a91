import { say } from "../changes.js";
import { pass, type Step } from "../composer.js";
import { texts } from "../texts.js";

/** A message over the configured size is refused with its length; a blank one does nothing. */
export const messageSize: Step = (ctx) => {
  const raw = ctx.message!.text;
  const { maxMessageChars } = ctx.settings;
  if (raw.length > maxMessageChars) return [say(texts.tooLong(raw.length, maxMessageChars))];
  return raw.trim() === "" ? [] : pass();
};
