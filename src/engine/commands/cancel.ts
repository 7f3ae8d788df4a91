import { say } from "../changes.js";
import { namespaceTexts } from "../namespace-texts.js";
import { commandLine, noArguments, type Command } from "./command.js";

/**
 * `/cancel`: a running call's owner stops it (or a question it asked). A /cancel sent
 * while a call runs is taken by that call out of band (call-runner.ts); one that comes
 * to its own turn found nothing running.
 */
export const cancel: Command = {
  name: "cancel",
  description: "Stop the tool call that is running (or a question it asked)",
  menu: true,
  who: "user",
  parse: noArguments,
  run: async () => [say(namespaceTexts.nothingToCancel)],
};

/** True for the message that cancels a running call or its question: `/cancel` alone (a bot mention allowed). */
export function isCancel(text: string): boolean {
  const line = commandLine(text.trim().replace(/^(\/[A-Za-z]\w*)@\S+/, "$1"));
  return line?.name === cancel.name && line.rest === "";
}
