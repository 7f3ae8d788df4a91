import { isApprover, mayGovern } from "../access.js";
import { say, type Change } from "../changes.js";
import { permissionTexts } from "../permission-texts.js";
import { minuteText, roomProactiveTexts as t } from "../proactive-texts.js";
import type { RoomProactive, RoomRepeat, RoomScheduleView } from "../room-proactive.js";
import { parseScheduleSpec } from "../schedule-spec.js";
import type { TurnContext } from "../turn-context.js";
import type { Command, Parsed } from "./command.js";

/** What `/schedule …` asks: the list, a new schedule, or the removal of the n-th. */
export type ScheduleRequest =
  { verb: "list" } | { verb: "add"; repeat: RoomRepeat; ask: string } | { verb: "remove"; which: string };

/**
 * `/schedule list|add|remove`: the room's own scheduled asks, held by bullmq like the
 * configured ones. Any user lists and adds; a schedule is removed by whoever added it
 * or by the room's approvers.
 */
export const schedule: Command<ScheduleRequest> = {
  name: "schedule",
  description: "Scheduled asks of this room: /schedule list, add every 1h <question>, remove N",
  menu: true,
  who: "user",
  parse: parseSchedule,
  async run(turn, request) {
    const port = turn.proactive;
    if (!port) return [say(t.unavailable)];
    if (request.verb === "list") return list(turn, port);
    if (request.verb === "remove") return remove(turn, port, request.which);
    const result = await port.addSchedule(
      turn.event.room,
      turn.namespace.name,
      request.repeat,
      request.ask,
      turn.event.sender.id,
    );
    if ("problem" in result) return [say(result.problem)];
    const { added } = await port.schedules(turn.event.room);
    return [say(t.added(added.length, result.added.repeat, result.added.ask, minuteText(result.added.next)))];
  },
};

/** Reads the rest of a `/schedule` line: no verb lists. */
export function parseSchedule(rest: string): Parsed<ScheduleRequest> {
  const [verb = "list", ...words] = rest.split(/\s+/).filter(Boolean);
  const args = words.join(" ");
  switch (verb.toLowerCase()) {
    case "list":
      return { ok: true, args: { verb: "list" } };
    case "add": {
      const spec = parseScheduleSpec(args);
      return "problem" in spec
        ? { ok: false, problem: spec.problem }
        : { ok: true, args: { verb: "add", ...spec } };
    }
    case "remove":
      return { ok: true, args: { verb: "remove", which: args } };
    default:
      return { ok: false, problem: t.scheduleUsage };
  }
}

/**
 * Whoever added a schedule removes it, and the room's approvers; one that does not say
 * who added it (added before it was recorded) is the approvers', or any user's where
 * the binding names no approvers.
 */
function mayRemove(turn: TurnContext, entry: RoomScheduleView): boolean {
  const sender = turn.event.sender.id;
  if (entry.by === sender || isApprover(turn.access, sender)) return true;
  return entry.by === undefined && mayGovern(turn.access, sender);
}

function line(n: number | string, s: RoomScheduleView): string {
  return `${n}. ${s.repeat} — ${s.ask} (next: ${minuteText(s.next)})`;
}

async function list(turn: TurnContext, port: RoomProactive): Promise<Change[]> {
  const { added, configured } = await port.schedules(turn.event.room);
  if (added.length === 0 && configured.length === 0) return [say(t.none)];
  const lines = [t.listHead, ...(added.length ? added.map((s, i) => line(i + 1, s)) : ["(none added here)"])];
  if (configured.length > 0)
    lines.push("", t.configuredHead, ...configured.map((s) => line(`• ${s.name}`, s)));
  return [say(lines.join("\n"))];
}

async function remove(turn: TurnContext, port: RoomProactive, which: string): Promise<Change[]> {
  const room = turn.event.room;
  const { added } = await port.schedules(room);
  const n = Number(which);
  const entry = Number.isInteger(n) && n >= 1 ? added[n - 1] : undefined;
  if (!entry) return [say(t.noSuch(which || "(none given)", added.length))];
  if (!mayRemove(turn, entry)) return [say(permissionTexts.notScheduleOwner(n))];
  const removed = await port.removeSchedule(room, n);
  if (!removed) return [say(t.noSuch(which, added.length))];
  return [say(t.removed(n, removed.repeat, removed.ask))];
}
