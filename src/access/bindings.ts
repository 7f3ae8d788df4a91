import type { Config, MatrixConfig } from "../core/config.js";
import type { ApprovalsConfig } from "../core/config/roles.js";
import type { Origin } from "../core/origin.js";
import { matrixRoom, shellRoom, telegramRoom, type Platform } from "../core/room.js";
import { botIdPart } from "../core/telegram-token.js";

/** How a binding's destructive calls are approved, with the defaults filled in. */
export interface ApprovalRule {
  by: "requester" | "approvers";
  count: number;
  /** Tools that need this approval even when MCP does not mark them destructive; undefined: only destructive ones. */
  tools?: readonly string[];
  where: "room" | "dm";
}

/**
 * One binding as the edges, the engine, the worker's re-check and the CLI see it,
 * whatever the platform: its name, who may ask (`users`, as sender ids: `tg:901`,
 * `@alice:example.org`, `shell:alice`; `anyone` for a terminal room without a binding),
 * who may call tools directly and who may approve (undefined: the default), who may
 * press buttons without being a user, who may bring the bot in, and what the trail keeps.
 * What each may do is decided from it in rules.ts.
 */
export interface Binding {
  name: string;
  platform: Platform;
  /** A chat with several people (a Telegram group, a Matrix room): approvals may go to direct chats. */
  group: boolean;
  users: ReadonlySet<string> | "anyone";
  callers?: ReadonlySet<string>;
  approvers?: ReadonlySet<string>;
  approvals: ApprovalRule;
  auditArguments: boolean;
  /** The bot of a Telegram binding (its direct chats are where `where: dm` approvals go). */
  botId?: number;
  /** The room key of a binding that is one room (a group, a Matrix room, a terminal room). */
  room?: string;
  /**
   * Who may press buttons here without being users: the approvers whose approvals are
   * asked here (a Telegram group's approvers; in a bot's direct chats, the approvers of
   * its groups that ask in direct chats).
   */
  pressers?: ReadonlySet<string>;
  /** Users at or above this power level may ask too (Matrix). */
  powerLevel?: number;
  /** Who may invite the bot into the room (Matrix: `matrix.inviters`, else the room's users). */
  inviters?: ReadonlySet<string>;
}

interface RoleKeys<U> {
  name?: string;
  callers?: U[];
  approvers?: U[];
  approvals?: ApprovalsConfig;
  audit?: { arguments: boolean };
}

function roles<U>(
  raw: RoleKeys<U>,
  id: (u: U) => string,
): Pick<Binding, "callers" | "approvers" | "approvals" | "auditArguments"> {
  const approvers = raw.approvers?.map(id);
  const a = raw.approvals;
  return {
    ...(raw.callers ? { callers: new Set(raw.callers.map(id)) } : {}),
    ...(approvers ? { approvers: new Set(approvers) } : {}),
    approvals: {
      by: a?.by ?? (approvers ? "approvers" : "requester"),
      count: a?.count ?? 1,
      ...(a?.tools ? { tools: a.tools } : {}),
      where: a?.where ?? "room",
    },
    auditArguments: raw.audit?.arguments ?? true,
  };
}

type TelegramBot = NonNullable<Config["telegram"]>["bots"][number];
type TelegramGroup = TelegramBot["groups"][number];

/** The name of a Telegram bot's direct-chat binding: `name:`, else `telegram:<bot id>`. */
export function telegramDmBinding(bot: TelegramBot, botId: number): string {
  return bot.name ?? `telegram:${botId}`;
}

/** The name of a Telegram group's binding: `name:`, else `telegram:<bot id>:<chat id>`. */
export function telegramGroupBinding(group: TelegramGroup, botId: number): string {
  return group.name ?? `telegram:${botId}:${group.chat}`;
}

/** The name of a Matrix room's binding: `name:`, else `matrix:<room id>`. */
export function matrixBinding(room: { name?: string; room: string }): string {
  return room.name ?? `matrix:${room.room}`;
}

const tgId = (u: number) => `tg:${u}`;
const same = (u: string) => u;
const shellId = (u: string) => `shell:${u}`;

/** Every binding of a configuration, each under its name (`name:`, else one made from where it is). */
export function allBindings(config: Config): Binding[] {
  const out: Binding[] = [];
  for (const bot of config.telegram?.bots ?? []) {
    const botId = botIdPart(bot.token);
    if (botId === undefined) continue;
    out.push(...telegramBindings(bot, botId));
  }
  if (config.matrix) out.push(...matrixBindings(config.matrix));
  for (const r of config.shell.rooms) {
    out.push({
      name: r.name ?? `shell:${r.room}`,
      platform: "shell",
      group: false,
      users: r.users ? new Set(r.users.map(shellId)) : "anyone",
      room: shellRoom(r.room),
      ...roles(r, shellId),
    });
  }
  return out;
}

/** A Telegram bot's bindings: its direct chats first, then each of its groups. */
export function telegramBindings(bot: TelegramBot, botId: number): Binding[] {
  // Approvers of groups that ask in direct chats press their approvals in the bot's direct chats.
  const dmPressers = bot.groups.flatMap((g) => (g.approvals?.where === "dm" ? (g.approvers ?? []) : []));
  return [
    {
      name: telegramDmBinding(bot, botId),
      platform: "telegram",
      group: false,
      users: new Set(bot.users.map(tgId)),
      botId,
      pressers: new Set(dmPressers.map(tgId)),
      ...roles(bot, tgId),
    },
    ...bot.groups.map((g): Binding => ({
      name: telegramGroupBinding(g, botId),
      platform: "telegram",
      group: true,
      users: new Set(g.users.map(tgId)),
      botId,
      room: telegramRoom(botId, g.chat),
      pressers: new Set((g.approvers ?? []).map(tgId)),
      ...roles(g, tgId),
    })),
  ];
}

/** The bindings of the configured Matrix rooms, in their order. */
export function matrixBindings(matrix: Pick<MatrixConfig, "rooms" | "inviters">): Binding[] {
  return matrix.rooms.map((r) => ({
    name: matrixBinding(r),
    platform: "matrix",
    group: true,
    users: new Set(r.users),
    room: matrixRoom(r.room),
    ...(r.powerLevel === undefined ? {} : { powerLevel: r.powerLevel }),
    // Whoever may talk in a room may bring the bot into it, unless matrix.inviters says who may.
    inviters: new Set(matrix.inviters.length > 0 ? matrix.inviters : r.users),
    ...roles(r, same),
  }));
}

/** The operator's own terminal room (no `shell.rooms` entry): anyone at the terminal, approving their own calls. */
function operatorShell(room: string): Binding {
  return {
    name: `shell:${room.slice("shell:".length)}`,
    platform: "shell",
    group: false,
    users: "anyone",
    room,
    approvals: { by: "requester", count: 1, where: "room" },
    auditArguments: true,
  };
}

/**
 * Finds the binding of an event's room from its typed origin: a Telegram bot's direct
 * chats or one of its groups (a forum topic belongs to its group), a Matrix room, a
 * terminal room. Undefined when no binding names it (the edge refuses those first).
 */
export function bindingFinder(
  config: Config,
): (event: { room: string; origin: Origin }) => Binding | undefined {
  const bindings = allBindings(config);
  const byRoom = new Map(bindings.filter((b) => b.room).map((b) => [b.room!, b]));
  const dms = new Map(
    bindings.filter((b) => b.platform === "telegram" && !b.group).map((b) => [b.botId!, b]),
  );
  return ({ room, origin }) => {
    switch (origin.platform) {
      case "telegram":
        if (origin.chatType === "private") return dms.get(origin.botId);
        // A migrated group keeps its first id in its room key; the binding may name either.
        return (
          byRoom.get(telegramRoom(origin.botId, origin.chatId)) ??
          (origin.roomChat === undefined
            ? undefined
            : byRoom.get(telegramRoom(origin.botId, origin.roomChat)))
        );
      case "matrix":
        return byRoom.get(matrixRoom(origin.roomId));
      case "shell":
        return byRoom.get(room) ?? operatorShell(room);
    }
  };
}
