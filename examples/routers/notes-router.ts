// A minimal roomgate namespace in TypeScript: the router `notes.ask` and two tools.
// Run it as a stdio MCP server (Node >= 22.18 runs TypeScript directly):
//   roomgate check --command "node examples/routers/notes-router.ts" --prefix notes. --require answer
// docs/routers.md explains every part.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const NOTES = [
  { id: "note-1", url: "https://example.org/notes/1", text: "Redis keeps the queue" },
  { id: "note-2", url: "https://example.org/notes/2", text: "MCP routers answer deterministically" },
];

// The Answer every router returns as structuredContent; roomgate shows it verbatim.
const Answer = {
  ok: z.boolean(),
  answer: z.string(),
  items: z.array(z.object({ id: z.string(), url: z.string().nullish() })),
  caveat: z.string().nullish(),
  options: z.array(z.string()),
};
type Answer = {
  ok: boolean;
  answer: string;
  items: { id: string; url?: string | null }[];
  caveat?: string | null;
  options: string[];
};

const readOnly = { readOnlyHint: true, destructiveHint: false };
const reply = (answer: Answer) => ({
  content: [{ type: "text" as const, text: answer.answer }],
  structuredContent: answer,
});

function search(query: string): Answer {
  const words = query
    .toLowerCase()
    .split(/\W+/)
    .filter((w) => w.length > 2);
  const found = NOTES.filter((n) => words.some((w) => n.text.toLowerCase().includes(w)));
  if (found.length === 0)
    return { ok: false, answer: `No note mentions "${query}".`, items: [], caveat: null, options: [] };
  return {
    ok: true,
    answer: `${found.length} note(s) match.`,
    items: found.map(({ id, url }) => ({ id, url })),
    caveat: null,
    options: [],
  };
}

function recent(): Answer {
  return {
    ok: true,
    answer: "The latest notes.",
    items: NOTES.map(({ id, url }) => ({ id, url })),
    caveat: "Only the last two are kept.",
    options: [],
  };
}

const server = new McpServer({ name: "notes", version: "1.0.0" });

server.registerTool(
  "notes.ask",
  {
    title: "Ask the notes",
    description: "Routes a question to the right notes tool.",
    inputSchema: { question: z.string() },
    outputSchema: Answer,
    annotations: readOnly,
  },
  async ({ question }) => {
    const q = question.toLowerCase();
    if (q.startsWith("search ")) return reply(search(question.slice(7)));
    if (q.includes("recent") || q.includes("latest")) return reply(recent());
    // Never guess: ask back, naming the tools that could answer. Each option that names a
    // tool is a button; pressing it calls that tool with the original question.
    return reply({
      ok: false,
      answer: "Do you want the latest notes or a search?",
      items: [],
      caveat: null,
      options: ["notes.recent", "notes.search"],
    });
  },
);

server.registerTool(
  "notes.recent",
  {
    title: "Recent notes",
    description: "The latest notes.",
    inputSchema: {},
    outputSchema: Answer,
    annotations: readOnly,
  },
  async () => reply(recent()),
);

server.registerTool(
  "notes.search",
  {
    title: "Search notes",
    description: "Notes that mention the words of the query.",
    inputSchema: { query: z.string() },
    outputSchema: Answer,
    annotations: readOnly,
  },
  async ({ query }) => reply(search(query)),
);

await server.connect(new StdioServerTransport());
