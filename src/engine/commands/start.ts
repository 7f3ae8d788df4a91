import type { NamespaceAbout } from "../../namespace/call-options.js";
import { say } from "../changes.js";
import { texts } from "../texts.js";
import { noArguments, type Command } from "./command.js";

/** `/start`: who this bot is (the server's own description) and the commands. */
export const start: Command = {
  name: "start",
  description: "What this bot is for, and the commands",
  menu: false,
  who: "user",
  parse: noArguments,
  async run(turn, _args, menu) {
    const ns = turn.namespace;
    const about = await ns.about();
    return [
      say(
        [texts.greeting(ns.name, describeServer(about)), texts.howTo(turn.event.platform), "", ...menu].join(
          "\n",
        ),
      ),
    ];
  },
};

/** The server's own short description: serverInfo.description, else the first paragraph of its instructions. */
function describeServer(about: NamespaceAbout): string | undefined {
  if (about.description?.trim()) return about.description.trim();
  const first = about.instructions
    ?.trim()
    .split(/\n\s*\n/)[0]
    ?.trim();
  return first || undefined;
}
