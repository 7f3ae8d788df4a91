import type { Config } from "./config.js";
import { botIdPart } from "./telegram-token.js";

/** The namespace a proactive turn in a room asks, or why that room cannot have one. */
export type RoomTarget = { namespace: string } | { problem: string };

/**
 * Finds the namespace a room is bound to, for a schedule or hook that names the room
 * (and maybe a namespace): a Telegram DM with one of the bot's users or one of its
 * groups, a configured Matrix room, or a terminal room with its namespace named.
 * A room is bound to exactly one namespace, so a different one is refused.
 */
export function roomTarget(config: Config, room: string, namespace?: string): RoomTarget {
  const bound = boundNamespace(config, room);
  if ("problem" in bound) return bound;
  const chosen = namespace ?? bound.namespace;
  if (chosen === undefined) {
    return { problem: `the room has no binding of its own: name its namespace (\`namespace:\`)` };
  }
  if (bound.namespace !== undefined && chosen !== bound.namespace) {
    return { problem: `the room is bound to namespace "${bound.namespace}", not "${chosen}"` };
  }
  if (!(chosen in config.namespaces)) return { problem: `unknown namespace "${chosen}"` };
  return { namespace: chosen };
}

function boundNamespace(config: Config, room: string): { namespace?: string } | { problem: string } {
  const telegram = /^telegram:(\d+):(-?\d+)(?::(\d+))?$/.exec(room);
  if (telegram) {
    const bot = config.telegram?.bots.find((b) => botIdPart(b.token) === Number(telegram[1]));
    if (!bot) return { problem: `no bot with id ${telegram[1]} under telegram.bots` };
    const chat = Number(telegram[2]);
    const ok = chat > 0 ? bot.users.includes(chat) : bot.groups.some((g) => g.chat === chat);
    if (!ok) {
      return {
        problem:
          chat > 0
            ? `user ${chat} is not in the bot's users, so the bot may not write to them`
            : `group ${chat} is not in the bot's groups`,
      };
    }
    const topic = telegram[3];
    if (chat < 0) {
      const group = bot.groups.find((g) => g.chat === chat)!;
      return { namespace: (topic && group.topics[topic]) || group.namespace || bot.namespace };
    }
    // A private-chat topic's namespace is the one its topic was made for: the schedule or hook names it.
    if (topic !== undefined && bot.topics.length > 0) return {};
    return { namespace: bot.namespace };
  }
  if (room.startsWith("matrix:")) {
    // A thread (`matrix:<room>:<root event>`) is bound as its room is.
    const binding = config.matrix?.rooms.find(
      (r) => room === `matrix:${r.room}` || room.startsWith(`matrix:${r.room}:$`),
    );
    if (!binding) return { problem: `room ${room.slice(7)} is not under matrix.rooms` };
    return { namespace: binding.namespace };
  }
  if (room.startsWith("shell:")) return {};
  return { problem: "not a room key" };
}
