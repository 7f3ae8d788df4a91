import type { ProactiveSource } from "../core/event.js";

/** The UTC time of a fire or delivery, to the second, as the marker line shows it. */
function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The bot's own lines for turns that no person started, kept apart from log text. */
export const proactiveTexts = {
  /** The line that marks a proactive answer, so nobody takes it for a reply to them. */
  marker: (source: ProactiveSource) => {
    switch (source.type) {
      case "schedule":
        return `⏰ Scheduled ask "${source.name}" (${utc(source.at)})`;
      case "hook":
        return `🪝 Webhook "${source.name}" (${utc(source.at)})`;
      case "resource":
        return `🔔 Resource updated: ${source.name} (${utc(source.at)})`;
    }
  },
  noRouter: (ns: string) => `"${ns}" has no router, so this proactive question went to no tool.`,
  resourceEmpty: (uri: string) => `${uri} has no content to show.`,
} as const;

/** A time as /schedule and /mute show it, to the minute: `2026-05-01 08:00 UTC`. */
export function minuteText(ms: number | undefined): string {
  return ms === undefined ? "unknown" : `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Lines of /schedule and /mute. */
export const roomProactiveTexts = {
  unavailable: "Schedules and /mute are not available here (nothing in this process runs them).",
  scheduleUsage:
    "Usage: /schedule list · /schedule add every 30m <question> · /schedule add <cron> [tz=Europe/Berlin] <question> · /schedule remove <number>",
  none: "This room has no schedules. Add one with /schedule add every 1h <question>.",
  listHead: "Schedules of this room:",
  configuredHead: "From the configuration (an operator changes these):",
  added: (n: number, repeat: string, ask: string, next: string) =>
    `Scheduled #${n}: ${repeat} — ${ask}\nNext: ${next}. Remove it with /schedule remove ${n}.`,
  removed: (n: number, repeat: string, ask: string) =>
    `Removed schedule #${n} (${repeat} — ${ask}); it will not fire again.`,
  noSuch: (n: string, count: number) =>
    count === 0
      ? `There is no schedule ${n}: this room has none.`
      : `There is no schedule ${n}; choose 1 to ${count} (see /schedule list).`,
  muteUsage: "Usage: /mute 2h (hold scheduled, webhook and resource posts for 2 hours) · /mute off · /mute",
  mutedUntil: (until: string) =>
    `Muted until ${until}: scheduled, webhook and resource posts wait until then (answers to you do not). /mute off ends it.`,
  mutedNow: (until: string, held: number) =>
    `This room is muted until ${until}; ${held} post${held === 1 ? "" : "s"} held. /mute off ends it.`,
  notMuted: "This room is not muted. /mute 2h holds proactive posts for 2 hours.",
  unmuted: (what: string) => `Mute ended (${what}).`,
  tooLong: (max: string) => `A mute can last at most ${max}.`,
  badDuration: (text: string) => `"${text}" is not a duration like 30m, 2h or 1d.`,
} as const;
