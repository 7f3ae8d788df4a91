/** The bot's own lines about a namespace's tools (routing without a router, approvals, progress), apart from log text. */
export const namespaceTexts = {
  noRouterMatches: (ns: string) =>
    `"${ns}" has no router, so your message went to no tool. These of its tools match your words; choose one to run it:`,
  noRouterNothing: (ns: string) =>
    `"${ns}" has no router, so your message went to no tool, and none of its tools matches your words. Send /tools to see them.`,
  taskRequired: (tool: string) =>
    `${tool} runs only as an MCP task, and roomgate does not run MCP tasks yet. Nothing was called.`,
} as const;
