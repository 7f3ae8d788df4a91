import { pass, type Step } from "../composer.js";
import { handleCommand } from "../command-handlers.js";
import { parseCommand } from "../command-parser.js";

/** `/command …` runs a chat command (an option's text never does). */
export const commands: Step = async (ctx) => {
  const { text, fromOption } = ctx.message!;
  const trimmed = text.trim();
  if (fromOption || !trimmed.startsWith("/")) return pass();
  const command = parseCommand(trimmed);
  return command ? handleCommand(ctx, command) : pass();
};
