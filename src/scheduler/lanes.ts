import { platformOf } from "../core/room.js";

/**
 * The queue lane a room's turns run in: one per platform, except that each terminal
 * room has its own lane, since only the process attached to that terminal can print.
 */
export function laneOf(room: string): string {
  const platform = platformOf(room);
  if (platform !== "shell") return platform;
  return `shell-${room.slice("shell:".length).replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
