import type { Config, MatrixConfig, TelegramConfig } from "../core/config.js";
import { originOn, type InboundEvent } from "../core/event.js";
import { matrixRoom } from "../core/room.js";
import { botIdPart } from "../core/telegram-token.js";
import { bindingFinder, matrixBindings } from "./bindings.js";
import { mayAsk, type PairedCheck } from "./rules.js";
import { botMayPost, namespacesOf, telegramAllowed } from "./telegram.js";

/**
 * The worker's own check of a queued Telegram event against the bindings as configured
 * now, instead of the `allowed` flag read back from Redis: the event's bot must bind a
 * room of that chat to the event's namespace (its own, a topic's or the group's) and the
 * sender must be allowed in that chat, by the same rule as the edge.
 */
export function telegramRecheck(
  telegram: TelegramConfig,
  paired?: PairedCheck,
): (event: InboundEvent) => boolean {
  const bots = new Map(
    telegram.bots.flatMap((bot) => {
      const id = botIdPart(bot.token);
      return id === undefined ? [] : [[id, bot] as const];
    }),
  );
  return (event) => {
    const origin = originOn(event, "telegram");
    if (!origin) return false;
    const { botId, chatId, chatType, userId, roomChat } = origin;
    const bot = bots.get(botId);
    if (bot === undefined) return false;
    // No person: the chat itself must still be one the bot may post into, for this namespace.
    const bound = namespacesOf(bot, { id: chatId, type: chatType }, roomChat).has(event.namespace);
    if (event.kind === "proactive") return bound && botMayPost(bot, chatId);
    // A migrated group is bound by either of its ids: the one it has, or the one its room keeps.
    const press = event.kind === "choice" || event.kind === "approval";
    const allowedIn = (id: number) => telegramAllowed(bot, { id, type: chatType }, userId, { paired, press });
    return (
      event.sender.id === `tg:${userId}` &&
      bound &&
      (allowedIn(chatId) || (roomChat !== undefined && allowedIn(roomChat)))
    );
  };
}

/**
 * The worker's own check of a queued Matrix event against the bindings as configured
 * now: the room must be bound to the event's namespace and the sender allowed by the
 * same rule as the edge. A room that also admits by power level cannot be checked
 * without its state, so there the receiver's verdict (made from the power levels it
 * keeps current from sync) stands for the others.
 */
export function matrixRecheck(
  matrix: Pick<MatrixConfig, "rooms" | "inviters">,
  paired?: PairedCheck,
): (event: InboundEvent) => boolean {
  const bindings = new Map(matrixBindings(matrix).map((b, i) => [matrix.rooms[i]!.room, b]));
  const namespaces = new Map(matrix.rooms.map((r) => [r.room, r.namespace]));
  return (event) => {
    const origin = originOn(event, "matrix");
    if (!origin) return false;
    const binding = bindings.get(origin.roomId);
    if (!binding || namespaces.get(origin.roomId) !== event.namespace) return false;
    if (event.room !== matrixRoom(origin.roomId, origin.threadRoot)) return false;
    // No person: the room being bound to the event's namespace is the whole check.
    if (event.kind === "proactive") return true;
    return (
      mayAsk(binding, event.sender.id, { paired }) ||
      (binding.powerLevel !== undefined && event.sender.allowed)
    );
  };
}

/**
 * Who may use a terminal room, as the bindings say now: anyone at the terminal when no
 * `shell.rooms` entry binds it, else its users, listed or paired.
 */
export function shellRecheck(
  config: Config | undefined,
  paired?: PairedCheck,
): (event: InboundEvent) => boolean {
  const find = config ? bindingFinder(config) : undefined;
  return (event) => {
    const binding = find?.(event);
    return !binding || mayAsk(binding, event.sender.id, { paired });
  };
}
