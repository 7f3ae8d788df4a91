import type { ChoiceProblem } from "./offers.js";

/** Every line the bot says in its own words, kept apart from log text. */
export const texts = {
  tooLong: (length: number, limit: number) =>
    `Your message has ${length} characters; the limit is ${limit}. Nothing was sent to the agent.`,
  greeting: (ns: string, description: string | undefined) =>
    description
      ? `Hello! This bot is the "${ns}" agent: ${description}`
      : `Hello! This bot is the "${ns}" agent.`,
  helpIntro: (ns: string) => `This room talks to the "${ns}" agent.`,
  /** How to use a room, in the words of its platform (a terminal has no buttons). */
  howTo: (platform: string) =>
    "Send a question and its answer is shown exactly as the agent wrote it. " +
    `When it asks back, choose an option ${
      platform === "telegram" ? "with a button or " : platform === "matrix" ? "with its reaction or " : ""
    }by sending its number.`,
  unknownCommand: (name: string) => `Unknown command /${name}. Send /help for the list of commands.`,
  choice: {
    unknown: "That choice is not known here (it may belong to another chat). Nothing was done.",
    expired: "That choice has expired. Ask again to get fresh options.",
    used: "That choice was already made. Nothing was done.",
  } satisfies Record<ChoiceProblem, string>,
  chosen: (label: string) => `Chosen: ${label}`,
  numberOutOfRange: (n: string, count: number) =>
    `There is no option ${n.length > 12 ? `${n.slice(0, 12)}…` : n}; choose a number from 1 to ${count}.`,
  slotExpired: (tool: string, name: string, seconds: number) =>
    `The earlier request to ${tool} waited for ${name} longer than ${Math.round(seconds / 60)} minutes and has expired; ` +
    "your message is taken as a new question.",
  identityArgument: (tool: string, names: string[]) =>
    `${names.join(", ")} ${names.length === 1 ? "is" : "are"} filled in by the bot from who and where you are, ` +
    `so /call cannot set ${names.length === 1 ? "it" : "them"}. Nothing was called; send /call ${tool} without ${names.length === 1 ? "it" : "them"}.`,
  noRouter: (ns: string, tool: string) =>
    `The "${ns}" agent has no ${tool} router, so questions cannot be routed. Send /tools to see what it can do.`,
  notInNamespace: (tool: string, ns: string) =>
    `${tool} is not a tool of this room's agent (${ns}). Nothing was called.`,
  notEnabled: (tool: string) =>
    `${tool} is not enabled in this conversation yet. Send /tools to enable this agent's tools, then try again.`,
  askForArgument: (tool: string, name: string, description: string | undefined, type: string | undefined) =>
    `To run ${tool} I need ${name}${type && type !== "string" ? ` (${type})` : ""}` +
    `${description ? `: ${description}` : "."}\nSend it as your next message, or send "cancel".`,
  badArgument: (name: string, type: string | undefined) =>
    `That is not a valid ${type ?? "value"} for ${name}. Send it again, or send "cancel".`,
  slotCancelled: "Cancelled. Ask me anything.",
  invalidArguments: (tool: string, problem: string) =>
    `The arguments for ${tool} are not valid: ${problem}. Nothing was called.`,
  fileNotExpected:
    "I can use a text file only when I have asked for a text argument (for example a draft to check). Ask your question first.",
  fileWrongArgument: (name: string, type: string | undefined) =>
    `I am waiting for ${name}, which is ${type ?? "not text"}, so a file cannot fill it. Send it as a message.`,
  fileRejected: (reason: string) => `I cannot use that file: ${reason}`,
  internal: (ref: string) =>
    `Something went wrong on our side while answering (ref ${ref}). Please try again.`,
  reset: (ns: string) =>
    `New conversation started with the "${ns}" agent. Enabled tools and history were cleared.`,
  describeUsage: "Usage: /describe <tool>. Send /tools to see the tools.",
  unknownTool: (tool: string) => `There is no tool called ${tool} here. Send /tools to see the tools.`,
  noMatches: (words: string) => `No tool matches "${words}". Send /tools to see them all.`,
} as const;
