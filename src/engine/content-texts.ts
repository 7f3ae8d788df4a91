/** The bot's own lines around a tool's content (links, files, attached output). */
export const contentTexts = {
  link: (name: string, uri: string, description?: string) =>
    `🔗 ${name === uri ? uri : `${name}: ${uri}`}${description ? ` — ${description}` : ""}`,
  embedded: (uri: string, mime?: string) => `📄 ${uri}${mime ? ` (${mime})` : ""}`,
  embeddedFile: (uri: string) => `📎 ${uri} (attached)`,
  attachedText: (name: string, chars: number, lines: number) =>
    `… the full output (${chars} characters, ${lines} lines) is attached as ${name}.`,
  nothing: (tool: string) => `${tool} returned nothing to show.`,
} as const;
