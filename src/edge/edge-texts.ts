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
  paired: "Paired: you can now use this bot here.",
  alreadyPaired: "You are already allowed to use this bot here.",
  pairingInvalid:
    "That pairing code is not valid: it may be mistyped, used already or expired. Ask the operator for a new one.",
  pairingElsewhere: "That pairing code is not for this chat. Send it where the operator told you to.",
  pairingBlocked: "Too many wrong pairing codes from you; try again in an hour.",
  pairingUsage: "Send /pair followed by the code the operator gave you, e.g. /pair ABCD-EFGH-JKMN-PQRS.",
  fileTimeout: (name: string) =>
    `"${name}" took too long to download, so it was not read. Please send it again.`,
} as const;
