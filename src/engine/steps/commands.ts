import { hasRole } from "../access.js";
import { say } from "../changes.js";
import { commandLine, type AnyCommand, type CommandRole } from "../commands/command.js";
import { commandNamed, menuLines } from "../commands/index.js";
import { pass, type Step } from "../composer.js";
import { permissionTexts } from "../permission-texts.js";
import { texts } from "../texts.js";
import type { TurnContext } from "../turn-context.js";

/**
 * `/command …` (an option's text never is one): the line is split once, the sender's
 * role checked (before its arguments are read when the role does not depend on them),
 * the arguments read once by the command's parser, and its handler run. An unknown
 * command or unreadable arguments get one line and change nothing.
 */
export const commands: Step = async (ctx) => {
  const { text, fromOption } = ctx.message!;
  if (fromOption) return pass();
  const line = commandLine(text);
  if (!line) return pass();
  const command = commandNamed(line.name);
  if (!command) return [say(texts.unknownCommand(line.name))];
  if (typeof command.who === "string" && !allowed(ctx, command.who)) return [refusal(command, command.who)];
  const parsed = command.parse(line.rest);
  if (!parsed.ok) return [say(parsed.problem)];
  if (typeof command.who === "function") {
    const role = command.who(parsed.args);
    if (!allowed(ctx, role)) return [refusal(command, role)];
  }
  return command.run(ctx, parsed.args, menuLines());
};

function allowed(ctx: TurnContext, role: CommandRole): boolean {
  return hasRole(ctx.access, role, ctx.event.sender.id);
}

function refusal(command: AnyCommand, role: CommandRole) {
  return say(permissionTexts.notInRole(command.name, role));
}
