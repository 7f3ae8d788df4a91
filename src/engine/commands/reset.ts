import type { Command } from "./command.js";
import { newConversation } from "./new.js";

/** `/reset`: the same as /new, under the name people also try. */
export const reset: Command = { ...newConversation, name: "reset", description: "Same as /new" };
