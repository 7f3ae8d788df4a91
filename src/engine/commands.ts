/** One chat command: its name (without the slash) and the one-line description menus show. */
export interface CommandInfo {
  command: string;
  description: string;
}

/** The commands every room understands, in the order help and platform menus list them. */
export const COMMANDS: readonly CommandInfo[] = [
  { command: "help", description: "What this bot does and how to use it" },
  { command: "tools", description: "Show and enable this agent's tools; /tools words… searches them" },
  { command: "describe", description: "Show one tool's description and arguments" },
  { command: "call", description: "Call a tool with explicit arguments: /call tool key=value… or {json}" },
  { command: "cancel", description: "Stop the tool call that is running (or a question it asked)" },
  { command: "reset", description: "Start a new conversation (history and enabled tools)" },
  { command: "status", description: "Show this room's agent, conversation and enabled tools" },
];
