/** What the bot says in a room about trust in encrypted rooms: user-facing lines only. */
export const trustTexts = {
  unsignedDevice: (user: string) =>
    `${user}: your message came from a session you have not verified, so this bot did not read it. ` +
    "Verify that session from one of your other sessions (or set up cross-signing), then send it again.",
  identityChanged: (user: string) =>
    `${user}'s encryption identity changed since this bot last saw it, so it is not answering ${user} here ` +
    "until its operator confirms the new identity.",
} as const;
