import { parseDuration } from "../../core/config/proactive.js";
import { say, type Change } from "../changes.js";
import { parseCommand } from "../command-parser.js";
import { pass, type Step } from "../composer.js";
import { roomProactiveTexts as t } from "../proactive-texts.js";
import type { RoomProactive, RoomScheduleView } from "../room-proactive.js";
import { durationText, parseScheduleSpec } from "../schedule-spec.js";
import type { TurnContext } from "../turn-context.js";

function when(ms: number | undefined): string {
  return ms === undefined ? "unknown" : `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function line(n: number | string, s: RoomScheduleView): string {
  return `${n}. ${s.repeat} — ${s.ask} (next: ${when(s.next)})`;
}

/**
 * `/schedule list|add|remove` and `/mute <duration>|off`: a room's own scheduled asks
 * (held by bullmq like the configured ones) and a hold on its proactive posts. Only
 * the room's allowed users get this far (the pipeline's admission).
 */
export const roomProactive: Step = async (ctx) => {
  const { text, fromOption } = ctx.message!;
  if (fromOption) return pass();
  const command = parseCommand(text.trim());
  if (command?.name !== "schedule" && command?.name !== "mute") return pass();
  const port = ctx.proactive;
  if (!port) return [say(t.unavailable)];
  return command.name === "schedule" ? schedule(ctx, port, command.rest) : mute(ctx, port, command.rest);
};

async function schedule(ctx: TurnContext, port: RoomProactive, rest: string): Promise<Change[]> {
  const room = ctx.event.room;
  const [verb = "list", ...words] = rest.split(/\s+/).filter(Boolean);
  const args = words.join(" ");
  switch (verb.toLowerCase()) {
    case "list": {
      const { added, configured } = await port.schedules(room);
      if (added.length === 0 && configured.length === 0) return [say(t.none)];
      const lines = [
        t.listHead,
        ...(added.length ? added.map((s, i) => line(i + 1, s)) : ["(none added here)"]),
      ];
      if (configured.length > 0)
        lines.push("", t.configuredHead, ...configured.map((s) => line(`• ${s.name}`, s)));
      return [say(lines.join("\n"))];
    }
    case "add": {
      const spec = parseScheduleSpec(args);
      if ("problem" in spec) return [say(spec.problem)];
      const result = await port.addSchedule(room, ctx.namespace.name, spec.repeat, spec.ask);
      if ("problem" in result) return [say(result.problem)];
      const { added } = await port.schedules(room);
      return [say(t.added(added.length, result.added.repeat, result.added.ask, when(result.added.next)))];
    }
    case "remove": {
      const n = Number(args);
      const count = (await port.schedules(room)).added.length;
      if (!Number.isInteger(n) || n < 1) return [say(t.noSuch(args || "(none given)", count))];
      const removed = await port.removeSchedule(room, n);
      if (!removed) return [say(t.noSuch(args, count))];
      return [say(t.removed(n, removed.repeat, removed.ask))];
    }
    default:
      return [say(t.scheduleUsage)];
  }
}

async function mute(ctx: TurnContext, port: RoomProactive, rest: string): Promise<Change[]> {
  const room = ctx.event.room;
  const arg = rest.trim().toLowerCase();
  if (arg === "") {
    const state = await port.muteState(room);
    return [say(state.until === undefined ? t.notMuted : t.mutedNow(when(state.until), state.held))];
  }
  if (arg === "off") return [say(t.unmuted(await port.unmute(room)))];
  const ms = parseDuration(arg);
  if (ms === undefined) return [say(`${t.badDuration(rest.trim())} ${t.muteUsage}`)];
  if (ms > port.maxMuteMs) return [say(t.tooLong(durationText(port.maxMuteMs)))];
  const until = Date.now() + ms;
  await port.mute(room, until);
  return [say(t.mutedUntil(when(until)))];
}
