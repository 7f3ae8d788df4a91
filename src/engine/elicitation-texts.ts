/** The bot's own lines while it asks a server's questions in the room. */
export const elicitTexts = {
  intro: (ns: string, message: string, of?: string) => `${ns} asks${of ? ` ${of}` : ""}: ${message}`,
  invalid: (title: string, problem: string) => `That is not a valid ${title}: ${problem}. Send it again.`,
  timedOut: "No answer came in time, so the question was cancelled.",
  yes: "Yes",
  no: "No",
  skip: "Skip",
  submit: "Submit",
  decline: "Decline",
  cancel: "Cancel",
} as const;
