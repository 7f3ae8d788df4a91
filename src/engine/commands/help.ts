import { say } from "../changes.js";
import { texts } from "../texts.js";
import { noArguments, type Command } from "./command.js";

/** `/help`: what the room is for and the commands. */
export const help: Command = {
  name: "help",
  description: "What this bot does and how to use it",
  menu: true,
  who: "user",
  parse: noArguments,
  run: async (turn, _args, menu) => [
    say([texts.helpIntro(turn.namespace.name), texts.howTo(turn.event.platform), "", ...menu].join("\n")),
  ],
};
