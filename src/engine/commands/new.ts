import { newSession } from "../../sessions/session.js";
import { reset, say } from "../changes.js";
import { texts } from "../texts.js";
import { noArguments, type Command } from "./command.js";

/** `/new`: a new conversation (history and enabled tools go). */
export const newConversation: Command = {
  name: "new",
  description: "Start a new conversation (history and enabled tools)",
  menu: true,
  who: "user",
  parse: noArguments,
  run: async (turn) => [reset(newSession(turn.namespace.name)), say(texts.reset(turn.namespace.name))],
};
