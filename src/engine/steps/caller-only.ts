import { mayCall } from "../access.js";
import { say } from "../changes.js";
import { pass, type Step } from "../composer.js";
import { parseCommand } from "../command-parser.js";
import { permissionTexts } from "../permission-texts.js";

/** The commands that reach tools directly, past the router: the binding's `callers` only (DESIGN §9). */
const CALLER_COMMANDS = new Set(["call", "tools"]);

/** `/call` and `/tools` from someone who may ask but not call tools directly get one line, and nothing runs. */
export const callerOnly: Step = (ctx) => {
  const { text, fromOption } = ctx.message!;
  if (fromOption) return pass();
  const command = parseCommand(text.trim());
  if (!command || !CALLER_COMMANDS.has(command.name)) return pass();
  if (mayCall(ctx.access, ctx.event.sender.id)) return pass();
  return [say(permissionTexts.notCaller(command.name))];
};
