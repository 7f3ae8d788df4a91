import { slotOf } from "../../sessions/session.js";
import { say } from "../changes.js";
import { noArguments, type Command } from "./command.js";

/** `/status`: the room's agent, conversation, enabled tools and what waits. */
export const status: Command = {
  name: "status",
  description: "Show this room's agent, conversation and enabled tools",
  menu: true,
  who: "user",
  parse: noArguments,
  async run(turn) {
    const { session, namespace } = turn;
    // Only tools the server has: a server without `ask` or `tools` does not get them listed.
    const existing = new Set((await namespace.tools()).map((t) => t.name));
    const enabled = [...new Set([namespace.askTool, namespace.toolsTool, ...session.enabled])].filter(
      (t): t is string => t !== null && existing.has(t),
    );
    const slot = slotOf(session, turn.event.sender.id);
    const pending = slot
      ? `waiting for ${slot.missing[0]!.name} of ${slot.tool}`
      : session.offers.some((o) => !o.chosen && o.expiresAt > Date.now())
        ? "options waiting to be chosen"
        : "nothing";
    return [
      say(
        [
          `Agent: ${namespace.name}`,
          `Conversation: ${session.conversationId} (since ${new Date(session.createdAt).toISOString()})`,
          `Enabled tools: ${enabled.length > 0 ? enabled.join(", ") : "none"}`,
          `Pending: ${pending}`,
          `Turns so far: ${session.turns}`,
        ].join("\n"),
      ),
    ];
  },
};
