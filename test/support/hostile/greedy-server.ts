// A greedy MCP namespace "g" over stdio for the limit tests (issue 25): each GREEDY
// mode takes whatever the client lets it take of one quantity a namespace controls.
//   endless-list   tools/list always has a nextCursor; GREEDY_PAGE_TOOLS tools a page
//                  (0: empty pages), each with a GREEDY_TOOL_BYTES description
//   slow-progress  g.slow sends progress every GREEDY_EVERY_MS and answers after GREEDY_RUN_MS
//   progress-flood g.flood sends progress as fast as stdio takes it for GREEDY_RUN_MS
//   questions      g.quiz sends GREEDY_QUESTIONS elicitation requests at once
//   list-changed   g.churn sends tools/list_changed every GREEDY_EVERY_MS for GREEDY_RUN_MS
// Every mode also lists g.ask, a router that answers `pong: <question>`, and g.listings,
// which says how many tools/list requests the server has answered.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { answerJsonSchema } from "../../../src/core/answer.js";

const mode = process.env.GREEDY ?? "";
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const pageTools = num("GREEDY_PAGE_TOOLS", 200);
const toolBytes = num("GREEDY_TOOL_BYTES", 1_000);
const everyMs = num("GREEDY_EVERY_MS", 2_000);
const runMs = num("GREEDY_RUN_MS", 10_000);
const questions = num("GREEDY_QUESTIONS", 200);

const server = new Server(
  { name: "greedy", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true } } },
);

const readOnly = { readOnlyHint: true };
const noArgs = { type: "object" as const, properties: {} };
const TOOLS = [
  {
    name: "g.ask",
    description: "Answers pong",
    inputSchema: {
      type: "object" as const,
      properties: { question: { type: "string" } },
      required: ["question"],
    },
    outputSchema: answerJsonSchema(),
  },
  { name: "g.listings", description: "How many listings", annotations: readOnly, inputSchema: noArgs },
  { name: "g.slow", description: "Slow, with progress", annotations: readOnly, inputSchema: noArgs },
  { name: "g.flood", description: "Progress flood", annotations: readOnly, inputSchema: noArgs },
  { name: "g.quiz", description: "Many questions at once", annotations: readOnly, inputSchema: noArgs },
  { name: "g.churn", description: "list_changed flood", annotations: readOnly, inputSchema: noArgs },
];

let listings = 0;
let page = 0;
server.setRequestHandler(ListToolsRequestSchema, () => {
  listings += 1;
  if (mode !== "endless-list") return { tools: TOOLS };
  page += 1;
  const filler = "x".repeat(toolBytes);
  const tools = Array.from({ length: pageTools }, (_, i) => ({
    name: `g.tool_${page}_${i}`,
    description: filler,
    inputSchema: noArgs,
  }));
  return { tools: page === 1 ? [...TOOLS, ...tools] : tools, nextCursor: `page-${page}` };
});

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const token = request.params._meta?.progressToken;
  const progress = (n: number, message: string) =>
    token === undefined
      ? Promise.resolve()
      : extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: n, message },
        });
  switch (request.params.name) {
    case "g.listings":
      return text(`listings: ${listings}`);
    case "g.slow": {
      const started = Date.now();
      for (let n = 1; Date.now() - started < runMs && !extra.signal.aborted; n++) {
        await sleep(everyMs);
        await progress(n, `step ${n}`);
      }
      return text(`slow done after ${Date.now() - started} ms`);
    }
    case "g.flood": {
      const started = Date.now();
      let n = 0;
      while (Date.now() - started < runMs && !extra.signal.aborted) {
        n += 1;
        await progress(n, `flood ${n}`);
      }
      return text(`flood done: ${n} notifications`);
    }
    case "g.quiz": {
      const asked = Array.from({ length: questions }, (_, i) =>
        extra
          .sendRequest(
            {
              method: "elicitation/create",
              params: {
                message: `Question ${i + 1}?`,
                requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
              },
            },
            ElicitResultSchema,
          )
          .then((r) => r.action)
          .catch(() => "failed"),
      );
      const actions = await Promise.all(asked);
      return text(`quiz done: ${actions.filter((a) => a === "accept").length} accepted`);
    }
    case "g.churn": {
      const started = Date.now();
      while (Date.now() - started < runMs) {
        await extra.sendNotification({ method: "notifications/tools/list_changed" });
        await sleep(everyMs);
      }
      return text(`churn done; listings: ${listings}`);
    }
    default: {
      const answer = {
        ok: true,
        answer: `pong: ${String(request.params.arguments?.question)}`,
        items: [],
        options: [],
      };
      return { ...text(JSON.stringify(answer)), structuredContent: answer };
    }
  }
});

await server.connect(new StdioServerTransport());
