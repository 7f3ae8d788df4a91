/** The bot's own lines about a namespace's tools (routing without a router, approvals, progress), apart from log text. */
export const namespaceTexts = {
  noRouterMatches: (ns: string) =>
    `"${ns}" has no router, so your message went to no tool. These of its tools match your words; choose one to run it:`,
  noRouterNothing: (ns: string) =>
    `"${ns}" has no router, so your message went to no tool, and none of its tools matches your words. Send /tools to see them.`,
  taskRequired: (tool: string) =>
    `${tool} runs only as an MCP task, and its server does not offer tasks for tool calls. Nothing was called.`,
  approvalAsk: (ns: string, tool: string) =>
    `${ns} wants to run ${tool}, which MCP marks as possibly destructive (it may change or delete things), with these arguments:`,
  confirmAsk: (ns: string, tool: string) =>
    `${ns} wants to run ${tool}, which this room's configuration asks to confirm, with these arguments:`,
  approvalHow: "Approve or deny it (y / n). Nothing runs until you approve.",
  denied: (tool: string) => `Denied: ${tool} was not run.`,
  approvedGone: (tool: string, ns: string) =>
    `${tool} is no longer a tool of this room's agent (${ns}), so it was not run.`,
  cancelled: (tool: string) => `Cancelled: ${tool} was stopped, and its server was told so.`,
  nothingToCancel: "Nothing is running here to cancel.",
  /** The one line a Stop of a running call's progress ends its turn with. */
  stopped: "Stopped.",
  ambiguous: "That address is ambiguous; the server named these candidates. Choose one to call it:",
  noAllowedCandidates:
    "That address is ambiguous, and none of the candidates the server named is allowed in this room. Nothing was called.",
} as const;
