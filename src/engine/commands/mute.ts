import { parseDuration } from "../../core/config/proactive.js";
import { say } from "../changes.js";
import { minuteText, roomProactiveTexts as t } from "../proactive-texts.js";
import { durationText } from "../schedule-spec.js";
import type { Command, Parsed } from "./command.js";

/** What `/mute …` asks: how things stand, the end of the mute, or a mute for `ms`. */
export type MuteRequest = { verb: "show" } | { verb: "off" } | { verb: "for"; ms: number };

/**
 * `/mute 2h`, `/mute off`, `/mute`: a hold on the room's proactive posts (schedules,
 * webhooks, resources); answers to people are never held. Anyone sees the state; the
 * room's approvers (any user where the binding names none) change it.
 */
export const mute: Command<MuteRequest> = {
  name: "mute",
  description: "Hold scheduled and webhook posts: /mute 2h, /mute off",
  menu: true,
  who: (request) => (request.verb === "show" ? "user" : "approver"),
  parse: parseMute,
  async run(turn, request) {
    const port = turn.proactive;
    if (!port) return [say(t.unavailable)];
    const room = turn.event.room;
    if (request.verb === "show") {
      const state = await port.muteState(room);
      return [say(state.until === undefined ? t.notMuted : t.mutedNow(minuteText(state.until), state.held))];
    }
    if (request.verb === "off") return [say(t.unmuted(await port.unmute(room)))];
    if (request.ms > port.maxMuteMs) return [say(t.tooLong(durationText(port.maxMuteMs)))];
    const until = Date.now() + request.ms;
    await port.mute(room, until);
    return [say(t.mutedUntil(minuteText(until)))];
  },
};

/** Reads the rest of a `/mute` line. */
export function parseMute(rest: string): Parsed<MuteRequest> {
  const arg = rest.trim().toLowerCase();
  if (arg === "") return { ok: true, args: { verb: "show" } };
  if (arg === "off") return { ok: true, args: { verb: "off" } };
  const ms = parseDuration(arg);
  if (ms === undefined) return { ok: false, problem: `${t.badDuration(rest.trim())} ${t.muteUsage}` };
  return { ok: true, args: { verb: "for", ms } };
}
