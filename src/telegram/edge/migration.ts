import type { NextFunction } from "grammy";
import { telegramRoom } from "../../core/room.js";
import { groupBinding } from "../../access/telegram.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * Telegram's service message that a group became a supergroup (in the old chat
 * `migrate_to_chat_id`, in the new one `migrate_from_chat_id`): recorded, so that the
 * group goes on as the same room under the binding that names either id. It goes no
 * further.
 */
export async function migration(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const message = ctx.taken.message;
  if (message?.migrate_to_chat_id === undefined && message?.migrate_from_chat_id === undefined) return next();
  const [from, to] =
    message.migrate_to_chat_id !== undefined
      ? [message.chat.id, message.migrate_to_chat_id]
      : [message.migrate_from_chat_id!, message.chat.id];
  const { identity, migrations, log } = ctx.deps;
  const { config } = identity;
  if (!migrations || (groupBinding(config, from, migrations) ?? groupBinding(config, to)) === undefined)
    return;
  // Both service messages arrive; the second changes nothing and is not logged again.
  if (!(await migrations.record(from, to))) return;
  log.info(
    { botId: identity.id, from, to, room: telegramRoom(identity.id, migrations.original(to)) },
    "telegram: a group was migrated to a supergroup; it continues as the same room and binding under its new id",
  );
}
