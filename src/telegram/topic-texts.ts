import type { ListedTopic } from "./room-binding.js";

/** What the bot says about its topics: user-facing lines only (the log gets its own). */
export const topicTexts = {
  /** The first line in a topic the bot made (or found again): what the topic is for. */
  intro: (name: string, namespace: string) =>
    `${name}: questions in this topic go to the ${namespace} agent. Ask here.`,
  /** The General of a chat with topics: which agent each topic talks to. */
  lobby: (topics: ListedTopic[], link: (t: ListedTopic) => string | undefined) => {
    if (topics.length === 0) return "This chat has no agent of its own. Ask the bot's operator to bind one.";
    const lines = topics.map((t) => {
      const url = link(t);
      return `• ${t.name} → ${t.namespace}${url ? ` (${url})` : ""}`;
    });
    const missing = topics.some((t) => t.threadId === undefined);
    return [
      "Each topic here talks to one agent:",
      ...lines,
      missing ? "Send /start to create the topics that are missing." : "Open a topic to ask its agent.",
    ].join("\n");
  },
  /** A private chat of a bot with topics while BotFather's topic mode is off, and no default agent. */
  topicsOff:
    "This bot talks to its agents in topics, but topic mode is off for it. Its operator turns it on in @BotFather (the bot's threads settings).",
  /** A topic the bot made for a namespace that the configuration no longer has. */
  retired: (name: string, namespace: string, topics: ListedTopic[]) =>
    `This topic (${name}) was for the ${namespace} agent, which this bot no longer serves. ` +
    (topics.length > 0
      ? `Its agents now: ${topics.map((t) => `${t.name} → ${t.namespace}`).join(", ")}. Send /start in General for their topics.`
      : "It has no other agents."),
  /** A topic could not be created (Telegram refused). */
  createFailed: (name: string) => `The topic "${name}" could not be created; try /start again later.`,
  /** A press on a button in a chat part that is bound to no agent. */
  noAgentToast: "This topic has no agent any more.",
} as const;
