import { telegramRoom } from "../../core/room.js";
import { edgeTexts } from "../../edge/edge-texts.js";
import { loggableError } from "../loggable-error.js";
import { groupBinding } from "../../access/telegram.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * Whether a binding names the group, by its id or the id it had or has across a
 * migration; a group not found is looked up again in the migrations every process
 * recorded (a sender may have learnt one from a refused reply) before it is given up.
 */
export async function isBoundChat(ctx: EdgeContext, chatId: number): Promise<boolean> {
  const { identity, migrations } = ctx.deps;
  if (groupBinding(identity.config, chatId, migrations) !== undefined) return true;
  if (!migrations) return false;
  await migrations.load();
  return groupBinding(identity.config, chatId, migrations) !== undefined;
}

/**
 * A chat no binding names is left once an hour, with one notice and one log line:
 * being added again, or messages from it, inside the hour cost nothing at all.
 */
export async function leaveChat(ctx: EdgeContext, chatId: number, type: string): Promise<void> {
  const { identity, migrations, strangers, keys, log } = ctx.deps;
  // The room key keeps the first id the group had.
  const room = telegramRoom(identity.id, migrations?.original(chatId) ?? chatId);
  if (!(await strangers.claim(keys.notice(room, "leaving", "bot")))) return;
  log.warn(
    { botId: identity.id, chatId },
    "telegram: in a chat no binding names; leaving (once an hour per chat)",
  );
  if (type !== "channel") await ctx.say(chatId, edgeTexts.leaving);
  await ctx.api.leaveChat(chatId).catch((err: unknown) => {
    log.warn({ err: loggableError(err), chatId }, "telegram: could not leave a chat");
  });
}
