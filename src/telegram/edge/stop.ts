import type { NextFunction } from "grammy";
import type { InboundEvent } from "../../core/event.js";
import type { TelegramOrigin } from "../../core/origin.js";
import { telegramRoom } from "../../core/room.js";
import { draftRef } from "../telegram-drafts.js";
import { bindingOf } from "../room-binding.js";
import { telegramAllowed } from "../../access/telegram.js";
import type { EdgeContext } from "./edge-context.js";

/**
 * The Stop a private chat shows on the bot's progress draft (Bot API 10
 * `stopped_message_generation`, with the draft's id): queued as a `stop` event of the
 * draft's room, for the running call whose progress it is. A Stop from someone the bot
 * does not serve, or in a room bound to no agent, is dropped without a word (they saw
 * no draft of a call to stop). Every other update goes on.
 */
export async function stop(ctx: EdgeContext, next: NextFunction): Promise<void> {
  const stopped = ctx.update.stopped_message_generation;
  if (!stopped) return next();
  const { identity, inbox, log } = ctx.deps;
  const { chat, message_thread_id: topicId } = stopped;
  if (
    !telegramAllowed(identity.config, chat, chat.id, { aliases: identity.aliases, paired: identity.paired })
  ) {
    return;
  }
  if (identity.topics && identity.config.topics.length > 0) await identity.topics.load(chat.id);
  const bound = bindingOf(
    identity.config,
    { chat, topicId },
    {
      topicsEnabled: identity.topicsEnabled ?? false,
      ...(identity.aliases ? { aliases: identity.aliases } : {}),
      ...(identity.topics ? { topics: identity.topics } : {}),
    },
  );
  if (bound.kind !== "agent") return;
  const origin: TelegramOrigin = {
    platform: "telegram",
    botId: identity.id,
    chatId: chat.id,
    chatType: "private",
    userId: chat.id,
    ...(topicId === undefined ? {} : { topicId }),
  };
  const event: InboundEvent = {
    eventId: `tg:${identity.id}:${ctx.update.update_id}`,
    kind: "stop",
    progress: draftRef(stopped.draft_id),
    namespace: bound.namespace,
    platform: "telegram",
    receivedAt: Date.now(),
    room: telegramRoom(identity.id, chat.id, topicId),
    ...(topicId === undefined ? {} : { topic: String(topicId) }),
    sender: { id: `tg:${chat.id}`, ...nameOf(chat), allowed: true },
    addressed: "button",
    origin,
  };
  const fresh = await inbox.enqueue(event);
  log.debug({ eventId: event.eventId, room: event.room, fresh }, "telegram: a Stop enqueued");
}

function nameOf(chat: { first_name?: string; last_name?: string; username?: string }): { name?: string } {
  const name = [chat.first_name, chat.last_name].filter(Boolean).join(" ") || chat.username;
  return name ? { name } : {};
}
