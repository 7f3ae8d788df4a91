/** One chat command: its name (without the slash) and the one-line description menus show. */
export interface CommandInfo {
  command: string;
  description: string;
  /** Whether platform menus list it (Telegram's /start has its own button, so it is not listed). */
  menu: boolean;
}

/**
 * The commands every room understands, in the order help and platform menus list
 * them: the one list the engine's handlers, /help and Telegram's setMyCommands follow.
 */
export const COMMANDS: readonly CommandInfo[] = [
  { command: "start", description: "What this bot is for, and the commands", menu: false },
  { command: "help", description: "What this bot does and how to use it", menu: true },
  {
    command: "tools",
    description: "Show and enable this agent's tools; /tools words… searches them",
    menu: true,
  },
  { command: "describe", description: "Show one tool's description and arguments", menu: true },
  {
    command: "call",
    description: "Call a tool with explicit arguments: /call tool key=value… or {json}",
    menu: true,
  },
  {
    command: "cancel",
    description: "Stop the tool call that is running (or a question it asked)",
    menu: true,
  },
  { command: "new", description: "Start a new conversation (history and enabled tools)", menu: true },
  { command: "reset", description: "Same as /new", menu: true },
  { command: "status", description: "Show this room's agent, conversation and enabled tools", menu: true },
  {
    command: "schedule",
    description: "Scheduled asks of this room: /schedule list, add every 1h <question>, remove N",
    menu: true,
  },
  { command: "mute", description: "Hold scheduled and webhook posts: /mute 2h, /mute off", menu: true },
];

/** The commands platform menus list, as Telegram's setMyCommands takes them. */
export function menuCommands(): { command: string; description: string }[] {
  return COMMANDS.filter((c) => c.menu).map(({ command, description }) => ({ command, description }));
}

/** Whether a word (without slash or bang) is one of the commands. */
export function isCommandName(word: string): boolean {
  return COMMANDS.some((c) => c.command === word.toLowerCase());
}
