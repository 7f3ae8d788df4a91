import { call } from "./call.js";
import { cancel } from "./cancel.js";
import type { AnyCommand } from "./command.js";
import { describe } from "./describe.js";
import { help } from "./help.js";
import { mute } from "./mute.js";
import { newConversation } from "./new.js";
import { reset } from "./reset.js";
import { schedule } from "./schedule.js";
import { start } from "./start.js";
import { status } from "./status.js";
import { tools } from "./tools.js";

/**
 * The commands every room understands, in the order help and platform menus list them.
 * A command is one file in this folder (its menu entry, who may run it, its parser and
 * its handler); a new one is that file and one line here.
 */
export const COMMANDS: readonly AnyCommand[] = [
  start,
  help,
  tools,
  describe,
  call,
  cancel,
  newConversation,
  reset,
  status,
  schedule,
  mute,
];

/** The command of that name, if there is one. */
export function commandNamed(name: string): AnyCommand | undefined {
  return COMMANDS.find((c) => c.name === name.toLowerCase());
}

/** The commands platform menus list, as Telegram's setMyCommands takes them. */
export function menuCommands(): { command: string; description: string }[] {
  return COMMANDS.filter((c) => c.menu).map(({ name, description }) => ({ command: name, description }));
}

/** The menu as /help and /start show it, one `/name — description` line each. */
export function menuLines(): string[] {
  return COMMANDS.filter((c) => c.menu).map((c) => `/${c.name} — ${c.description}`);
}

/** Whether a word (without slash or bang) is one of the commands. */
export function isCommandName(word: string): boolean {
  return commandNamed(word) !== undefined;
}
