/** What adapters say at the edge, before anything is queued: user-facing lines only. */
export const edgeTexts = {
  refusal: "Sorry, you are not allowed to use this bot here. Ask its operator to add you.",
  refusalToast: "You are not allowed to use this bot.",
  leaving:
    "This bot is not set up for this chat, so it is leaving. Ask its operator to bind this chat first.",
  tooFast: (perMinute: number) =>
    `You are sending more than ${perMinute} messages a minute; the extra ones were not passed on. Wait a moment and try again.`,
  queueFull: (cap: number) =>
    `This chat already has ${cap} messages waiting for an answer; the extra ones were not passed on. Wait for the answers and try again.`,
  fileTooLarge: (name: string, size: number, limit: number) =>
    `"${name}" is too large (${size} bytes); the limit is ${limit} bytes.`,
  fileTimeout: (name: string) =>
    `"${name}" took too long to download, so it was not read. Please send it again.`,
} as const;
