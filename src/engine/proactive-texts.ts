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
